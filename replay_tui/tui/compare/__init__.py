"""Comparisons in the app: replay runs compared (``runs``), two logs' own runs paired by task
(``logs``), and the standalone compare app (``app``)."""
