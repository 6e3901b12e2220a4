"""Bridges: the kit's suites run against plugins written for another engine's plugin
interface.

A bridge wraps such a plugin in a kit ``Platform`` generated from what that interface
declares, and registers a namespace in the entry-point group
``conformance.platform_namespaces`` so that ``--platform=NAMESPACE:NAME`` reaches it
(``conformance.contract.discovery``). Nothing below this package imports it, and it is
imported only for such names, so the kit never needs the other engine installed.
"""
