#!/usr/bin/python3
"""Write resources/texts/jargon-heldout.txt: 256 held-out English windows, one per line.

    /usr/bin/python3 tools/train/heldout_texts.py

The windows are the English models' held-out data (data.English.held_out: evenly spaced 64-byte
windows of the blocks no zoo model trained on), line breaks turned into spaces and the ends
trimmed, so each line fits the zoo's 64 positions.  `headlight figures realformer --corpus` and
File > Open corpus... take the file as it is.  Deterministic; needs the Debian package jargon-text.
"""
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import data  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "resources", "texts", "jargon-heldout.txt")


def main():
    ids, _ = data.English(64).held_out(count=256)
    lines = [bytes(row.tolist()).decode("ascii").replace("\n", " ").strip() for row in ids]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", newline="\n") as f:
        f.write("\n".join(line for line in lines if line) + "\n")
    print(f"{len(lines)} texts in {OUT}")


if __name__ == "__main__":
    main()
