"""replay_tui: a terminal debugger for LLM web agents."""

__version__ = "0.1.0"
