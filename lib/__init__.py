"""The shared code of the RNN encoder-decoder course.

Every chapter imports from here. Importing ``lib`` has no side effects: nothing is
downloaded, trained or moved to a device until a function asks for it.
"""

__version__ = "0.1.0"
