"""Throwaway (issue 22): writes target/explore/spattn.ima, specs/paged.ima's paged_attn and
paged_attn_rope as the working tree has them, renamed paged_attn_sp and paged_attn_rope_sp:
build.sh runs it with spattn.patch applied, which gives ima.cuh's ima_paged_attend a
guessed prologue. A block's start waits for three round trips to memory in turn: the
sequence's length (the partition's runs depend on it), then the partition's page ids,
then its first K and V tiles (bench/explore/pstamp: 4.7 µs at the median from a block's
entry to its first tile at B = 32). The patch loads the page ids of the partition the
block would take if the sequence filled its table (P * BS tokens) with the length, raw
(an entry past the sequence's pages is free under the contract), and where the guess
holds issues the first tiles before it stages the queries, so that two round trips
remain: the decode layer's tables are as wide as its longest sequence, so every full-length
sequence's guess holds. The page ids' loads are issued before the length's (the length's
check branches on its value, and the warp waits there: a review of the first form's SASS
found the page ids still loaded after it), and paged_attn_rope reads its position raw
for the same reason, checked where a rotation uses it. The block that writes the new
token (paged_attn_rope) issues the token's loads (its key and value halves, the angles,
the slot, read raw) before any is used and before the queries are staged, where they had
waited one after the other behind the queries' (a helper's SASS audit, session 55). A
guessed entry the block uses is
held to the contract (out of range: read again through the checked accessor, which
reports it and reads 0); where the guess fails, or a block's first tiles hold the new
token (paged_attn_rope), the block keeps the tree's order.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, write  # noqa: E402

before, plain = kernel("paged.ima", "paged_attn")
_, rope = kernel("paged.ima", "paged_attn_rope")
write("spattn", "/// Throwaway: paged_attn and paged_attn_rope with bench/explore/spattn/spattn.patch (gen.py).\n"
      + constants(before) + "\n" + edit(plain, [("kernel paged_attn ", "kernel paged_attn_sp ")]) + "\n"
      + edit(rope, [("kernel paged_attn_rope ", "kernel paged_attn_rope_sp ")]))
