#!/usr/bin/env bash
# Builds the wheel gemm_tma_cw24: cw24.patch (plain_box_words an odd multiple of 8 words,
# 24 at COLS = 192: rows 96 bytes apart, so that each half warp of the pair decode's
# LDS.64, 4 rows of 32 bytes, meets no bank conflict, where boxes of 48 leave it 2-way).
# Timed by bench/explore/against.py cw24.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/cw/cw24.patch cw24
