"""The Textual debugger: a thin view over the Textual-free core (see ``make_app``)."""
