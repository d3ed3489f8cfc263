"""The replay feature's screens: the episode browser, the stepper, mismatch and outcome groups,
the outcome screen, the run history and the live feed of a running replay."""
