import os
import sys

# Make tests/reference.py importable as `reference`.
sys.path.insert(0, os.path.dirname(__file__))
