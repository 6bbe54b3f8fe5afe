import os
import sys

# Make tests/reference.py and tests/helpers.py importable as `reference` and `helpers`.
sys.path.insert(0, os.path.dirname(__file__))
