"""Plugins whose factories name the wrong things."""

from kit_test_plugins import TestPlatform


class MissingWorkerPlatform(TestPlatform):
    @classmethod
    def get_worker_cls(cls) -> str:
        return "kit_test_plugins.no_such_module.Worker"


class NotACommunicatorPlatform(TestPlatform):
    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "kit_test_plugins.TestPlatform"


class UnrefusingAttentionPlatform(TestPlatform):
    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        # Skips the capability check: computes whatever it is asked.
        return "conformance.reference_engine.attention.oracle.OracleAttentionBackend"


class RenamedAttentionModulePlatform(TestPlatform):
    @classmethod
    def get_attn_backend_cls(cls, config) -> str:
        # Refuses what is undeclared, as it should, but names the backend by a module
        # path a refactoring left behind.
        super().get_attn_backend_cls(config)
        return "kit_test_plugins.attention_kernels.CpuAttentionBackend"
