"""The one episode model, on the data floor: what every reader produces and every engine and view
reads (``model``: Trajectory, its steps, outcome and sub-agent links), the problems a log can have
(``problems``: LoadProblem, errors as values) and the guards for untrusted JSON (``jsonscan``)."""
