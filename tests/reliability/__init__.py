"""The reliability and security suite: soak, crash/resume, parity fuzz, load, bad media,
secrets and escaping. ``make reliability`` runs it at full size and prints the figures;
``make test`` runs the same tests in a short form (see ``conftest.scale``)."""
