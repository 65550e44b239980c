"""A faithful local copy of the generation service that renders real media.

It speaks the interface's four endpoints, validates with the catalog, moves tasks through
queued -> processing -> succeeded/failed on an injectable clock, renders H.264 MP4s and PNGs,
and adds what testing needs: uploads, a ledger of what was billed, and fault injection.

Example (it serves on a local port)::

    from genlab import emulator

    with emulator.start(api_key="k", time_scale=0.02) as server:
        print(server.base_url)
"""

from __future__ import annotations

from genlab.emulator import samples
from genlab.emulator._faults import FaultConfig
from genlab.emulator._profile_app import ProfileApp
from genlab.emulator._profile_controls import Controls
from genlab.emulator._profile_serve import ProfileHandle, bind_profile, start_profile
from genlab.emulator._profiles import PROFILES, Profile, get_profile
from genlab.emulator._server import (
    KEEP_ALIVE,
    EmulatorApp,
    EmulatorHandle,
    check_api_key,
    create_app,
    listening_socket,
    start,
)
from genlab.emulator._state import DEFAULT_API_KEY, EmulatorState

__all__ = [
    "Controls",
    "DEFAULT_API_KEY",
    "KEEP_ALIVE",
    "EmulatorApp",
    "EmulatorHandle",
    "EmulatorState",
    "FaultConfig",
    "PROFILES",
    "Profile",
    "ProfileApp",
    "ProfileHandle",
    "bind_profile",
    "check_api_key",
    "create_app",
    "get_profile",
    "listening_socket",
    "samples",
    "start",
    "start_profile",
]
