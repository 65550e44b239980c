"""The catalog against the service interface (../shared/spec/service-interface.md), split by
concern. Shared tables and helpers live in ``_tables``; see its docstring."""

import pytest

# The helpers in _tables assert; rewrite them as pytest does test modules.
pytest.register_assert_rewrite(f"{__name__}._tables")
