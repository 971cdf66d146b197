# cython: language_level=3, annotation_typing=False, binding=True, wraparound=True, boundscheck=True
# The compiled twin of compression.py: the same source, compiled; the codecs run in C libraries.
include "compression.py"
