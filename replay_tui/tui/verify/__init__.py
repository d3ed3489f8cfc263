"""The WebArena-Verified evaluator's results in the app."""
