#: The version of the package (PEP 440).
__version__ = "0.1.0.dev0"
