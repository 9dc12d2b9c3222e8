"""The course's benchmarks: a package, so that its parts import each other and `lib` without
path loaders.

Run a part from the repository root as a module, e.g. `python -m bench.training --steps 60`;
`make bench` runs `python -m bench.run_all`, which starts every part the same way. Not part of
the installed `lib` package.
"""
