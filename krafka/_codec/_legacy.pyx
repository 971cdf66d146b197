# cython: language_level=3, annotation_typing=False, binding=True, wraparound=True, boundscheck=True
# The compiled twin of legacy.py: the same source, compiled (legacy sets are rare and cold).
include "legacy.py"
