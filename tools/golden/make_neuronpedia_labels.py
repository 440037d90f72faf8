#!/usr/bin/python3
"""Regenerate the Neuronpedia label fixtures under tests/data/neuronpedia/.

    /usr/bin/python3 tools/golden/make_neuronpedia_labels.py

Neuronpedia publishes each SAE's explanations as
v1/MODEL/SOURCE/explanations/batch-N.jsonl.gz in its public datasets bucket: gzip files of
one JSON object per line with "modelId", "layer" (the source id, e.g. "6-res-jb"), "index" (the
feature, as a string), "description", "typeName", "explanationModelName" and "embedding". The
folder pre_ln-res/explanations/ is laid out that way for the zoo SAE resources/saes/pre_ln:

  batch-1.jsonl.gz   two gzip members back to back (a concatenated export)
  batch-2.jsonl.gz   feature 5 explained first here ...
  batch-10.jsonl.gz  ... and again here: a reader in natural order (2 before 10) keeps batch 2's

and the hostile files beside it: truncated.jsonl.gz (the first 60 bytes of a member),
not-gzip.jsonl.gz (plain text), bad-line.jsonl.gz (a line without a description) and
two-sources.jsonl.gz (lines of two SAEs).
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "data", "neuronpedia")


def row(index, description, layer="1-res-zoo"):
    return {"modelId": "headlight-pre_ln", "layer": layer, "index": str(index),
            "description": description, "typeName": "oai_token-act-pair",
            "explanationModelName": "gpt-4o-mini", "embedding": None}


def member(rows):
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    return gzip.compress(text.encode("utf-8"), mtime=0)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    explanations = os.path.join(OUT, "pre_ln-res", "explanations")
    write(os.path.join(explanations, "batch-1.jsonl.gz"),
          member([row(116, "digits in years and numbers"), row(0, "the start of a word")]) +
          member([row(17, "spaces between words")]))
    write(os.path.join(explanations, "batch-2.jsonl.gz"),
          member([row(5, "explained in batch 2"), row(116, "a second explanation")]))
    write(os.path.join(explanations, "batch-10.jsonl.gz"),
          member([row(5, "explained in batch 10"), row(300, "capital letters")]))
    write(os.path.join(OUT, "truncated.jsonl.gz"), member([row(1, "cut off")] * 20)[:60])
    write(os.path.join(OUT, "not-gzip.jsonl.gz"), json.dumps(row(1, "plain")).encode())
    write(os.path.join(OUT, "bad-line.jsonl.gz"),
          member([row(1, "fine"), {"modelId": "headlight-pre_ln", "layer": "1-res-zoo",
                                   "index": "2"}]))
    write(os.path.join(OUT, "two-sources.jsonl.gz"),
          member([row(1, "one"), row(2, "other", layer="2-res-zoo")]))


if __name__ == "__main__":
    main()
