"""Plugins whose identity torch does not accept."""

from kit_test_plugins import TestPlatform


class UnknownDeviceTypePlatform(TestPlatform):
    device_type = "npu2"


class WrongDispatchKeyPlatform(TestPlatform):
    dispatch_key = "CUDA"


class MissingDistBackendPlatform(TestPlatform):
    dist_backend = "hccl2"


class NamelessDevicePlatform(TestPlatform):
    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return ""
