"""The one episode model, on the data floor: what every reader produces and every engine and view
reads (``model``: Trajectory, its steps, outcome and sub-agent links), the episodes opened
(``collection``: EpisodeSet, EpisodeRef; ``summary``: what a log's index lists of an episode), a seed
episode's fast reading as the engines see it (``reading``), structured text a log records
(``recorded``: a prompt's text, a call's JSON arguments), the problems a log can have
(``problems``: LoadProblem, errors as values) and the guards for untrusted JSON (``jsonscan``)."""
