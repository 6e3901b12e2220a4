"""The version of the plugin contract.

It goes into every result record and changes whenever a rule or a signature of the
contract changes, so a record says which rules it was judged by. Kept in a module of
its own so that the verifier and the support matrix can read it without importing
torch.
"""

CONTRACT_VERSION = "0.11"
