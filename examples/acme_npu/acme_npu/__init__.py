"""The Acme NPU platform plugin.

The Acme NPU of this example is emulated on the host: tensors live in host memory
(``device_type = "cpu"``), and the plugin's own attention kernel and communicator do
the work. Everything here is written against the kit's public contract only
(``conformance`` and ``conformance.contract``).
"""


def register() -> str | None:
    """The entry point of group ``conformance.platform_plugins``: the emulator needs
    nothing but the host, so it is always usable. Cheap and free of side effects: the
    kit calls it in every process it starts."""
    return "acme_npu.platform.AcmeNpuPlatform"
