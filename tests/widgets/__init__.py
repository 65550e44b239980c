"""The Studio and its widgets, headless (ipywidgets needs no frontend), against the in-thread
emulator; the shared fixtures are in ``conftest``."""
