"""The one place litellm is imported. Its bundled price map is forced before
the import (no network fetch), and its debug chatter is silenced. Every module
of this package takes `litellm` from here."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

litellm.suppress_debug_info = True

__all__ = ["litellm"]
