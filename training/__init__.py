"""Offline pipelines: training data, the NNUE trainer, the Texel tuner, the WDL fit.

Nothing the engine runs imports this package; it may import `eval` and
`search`.  Each module is a command (`python -m training.<module> --help`).
"""
