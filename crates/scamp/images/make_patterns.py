#!/usr/bin/env python3
# make_patterns.py - regenerate the synthetic test patterns in this folder.
#
#   gradient.png     256x256 8-bit grey, horizontal ramp: pixel(row r, col c) = c
#   checkerboard.png 256x256 8-bit grey, 8x8-pixel squares:
#                    pixel(r, c) = 224 if (r//8 + c//8) % 2 == 0 else 32
#                    (top-left square is 224)
#
# Requires numpy and Pillow. Usage: python3 make_patterns.py  (writes next to this script)
import os

import numpy as np
from PIL import Image

N = 256  # uint8 2-D arrays become mode "L" images
here = os.path.dirname(os.path.abspath(__file__))
r, c = np.indices((N, N))

gradient = c.astype(np.uint8)
checker = np.where((r // 8 + c // 8) % 2 == 0, 224, 32).astype(np.uint8)

Image.fromarray(gradient).save(os.path.join(here, "gradient.png"), optimize=True)
Image.fromarray(checker).save(os.path.join(here, "checkerboard.png"), optimize=True)
