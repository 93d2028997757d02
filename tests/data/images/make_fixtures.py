#!/usr/bin/python3
"""Writes the image fixtures of tests/engine/test_imagedecode.cpp with PIL (an encoder other than
the engine's own): an 8x6 pattern with R = 20 + 25x, G = 10 + 40y, B = 200 - 10(x + y).
Run from this folder: /usr/bin/python3 make_fixtures.py"""
from PIL import Image

W, H = 8, 6
rgb = Image.new("RGB", (W, H))
rgb.putdata([(20 + 25 * x, 10 + 40 * y, 200 - 10 * (x + y)) for y in range(H) for x in range(W)])
rgb.save("pil_rgb_q95.jpg", quality=95, subsampling=0, optimize=True)
rgb.convert("L").save("pil_grey_progressive.jpg", quality=95, progressive=True, optimize=True)
# Palette PNG with a transparent entry: decodes to the palette's RGB, transparency dropped.
pal = Image.new("P", (W, H))
pal.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255])
pal.putdata([(x + y) % 4 for y in range(H) for x in range(W)])
pal.save("pil_palette_trns.png", transparency=2)
