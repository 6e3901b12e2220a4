"""Plugins whose identity torch does not accept."""

from kit_test_plugins import TestPlatform


class UnknownDeviceTypePlatform(TestPlatform):
    device_type = "npu2"


class WrongDispatchKeyPlatform(TestPlatform):
    dispatch_key = "CUDA"


class MissingDistBackendPlatform(TestPlatform):
    dist_backend = "hccl2"
