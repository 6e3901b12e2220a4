"""A plugin whose capability declaration is malformed."""

import dataclasses

from kit_test_plugins import TestPlatform


class MalformedCapabilitiesPlatform(TestPlatform):
    # A typo'd feature and a block size no kernel can page by.
    capabilities = dataclasses.replace(
        TestPlatform.capabilities,
        block_sizes=(16, 24),
        features=TestPlatform.capabilities.features | {"sliding_windw"},
    )
