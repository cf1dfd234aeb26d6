"""What the coding agents (OpenHands, mini-swe-agent) share: the workspace
built from the files a problem's kind supplies (`workspace.py`), the confined
terminal (`terminal.py` writes the launcher of `confined_shell.py`), the
bridge from the agent's worker thread to the session's recorded model calls
(`bridge.py`), and the episode's thread, trace and hidden paths
(`episode.py`). Imports neither agent's library."""
