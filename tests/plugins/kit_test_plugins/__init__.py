"""Platform plugins for the kit's own tests: one correct, the rest deliberately broken.

Each broken platform is the cpu platform with exactly one rule of the contract broken,
so the suite must fail it on that rule's contract and on nothing else (unless the
breakage makes other rules unobservable; ``tests/plugins/catalogue.py`` says which).
They are registered through a real entry point by a dist-info the tests write.
"""

from conformance.reference_engine.platforms.cpu import CpuPlatform


class TestPlatform(CpuPlatform):
    """Base of the test plugins: ``plugin`` is the zero-argument entry-point function."""

    __test__ = False  # not a pytest test class, despite the name

    @classmethod
    def plugin(cls) -> str:
        return f"{cls.__module__}.{cls.__qualname__}"


class GoodPlatform(TestPlatform):
    """A correct third-party plugin (a renamed cpu platform): it must never fail."""

    device_name = "good-cpu"


def platform_naming(factory: str, component: type, module: str) -> type[TestPlatform]:
    """A test platform called ``<Component>Platform`` whose factory classmethod
    ``factory`` names ``component``; ``module`` must bind it to that name so its
    qualified name imports."""
    qualname = f"{component.__module__}.{component.__qualname__}"
    return type(f"{component.__name__}Platform", (TestPlatform,),
                {"__module__": module, factory: classmethod(lambda cls: qualname)})
