#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from the real files in tests/data:
#   make_corpus.sh DATA_DIR OUT_DIR
# Each target gets OUT_DIR/<target>/ with inputs in the form its LLVMFuzzerTestOneInput reads
# (parts joined by a NUL byte where a target reads several files; see fuzz_support.h).
set -euo pipefail
data=$1
out=$2
rm -rf "$out"
mkdir -p "$out"/{safetensors,shard_index,model_config,wordpiece_vocab,bpe_files,tokenizer_json,variant_spec,scene,lesson,torch_checkpoint,sae_folder,gguf,npz,feature_notes}

# Seeds above this size slow every execution (libFuzzer sizes max_len from the corpus) without
# adding structure the small files lack.
max_seed=65536
# Stdin becomes one seed of target $1, named by its SHA-1 as libFuzzer names corpus files (so
# duplicates collapse; a counter would not survive the subshell of a pipeline).
seed() {
  local tmp=$out/$1/.incoming
  cat > "$tmp"
  mv "$tmp" "$out/$1/$(sha1sum < "$tmp" | cut -c1-40)"
}
# The JSON header of a safetensors file ($2 bytes after the 8-byte length). Why head first:
# head stops reading at its count, so nothing upstream dies of SIGPIPE under pipefail.
header() { head -c $((8 + $2)) "$1" | tail -c +9; }

# Safetensors: small whole files, and the same split as header JSON, NUL, data section.
for file in "$data"/models/*/golden/*.safetensors "$data"/models/*/*.safetensors; do
  [[ $(stat -c %s "$file") -le $max_seed ]] || continue
  seed safetensors < "$file"
  length=$(od -An -t u8 -N 8 "$file" | tr -d ' ')
  { header "$file" "$length"; printf '\0'; tail -c +$((9 + length)) "$file"; } | seed safetensors
done
# The headers alone, with empty data sections (every range then lies outside), keep large
# models' tensor tables in the corpus.
for file in "$data"/models/*/model*.safetensors; do
  length=$(od -An -t u8 -N 8 "$file" | tr -d ' ')
  header "$file" "$length" | seed safetensors
done

for file in "$data"/models/*/model.safetensors.index.json; do seed shard_index < "$file"; done
for file in "$data"/configs/*.json "$data"/models/*/config.json "$data"/tokenizers/*/config.json \
            "$data"/zoo/*/config.json; do
  seed model_config < "$file"
  seed shard_index < "$file"
done

# SAE folders: cfg.json NUL sae_weights.safetensors (SAELens), hyperparams.json NUL
# checkpoints/final.safetensors (Llama Scope)
for dir in "$data"/sae/*/; do
  [[ -f $dir/cfg.json ]] || continue
  { cat "$dir/cfg.json"; printf '\0'; cat "$dir/sae_weights.safetensors"; } | seed sae_folder
done
for dir in "$data"/sae/*/; do
  [[ -f $dir/hyperparams.json ]] || continue
  { cat "$dir/hyperparams.json"; printf '\0'; cat "$dir/checkpoints/final.safetensors"; } |
    seed sae_folder
done

# Feature notes: a scan NUL a Neuronpedia batch (the scan's seeds from tests/data/feature_scans)
for file in "$data"/neuronpedia/*.jsonl.gz "$data"/neuronpedia/*/explanations/*.jsonl.gz; do
  for scan in "$data"/feature_scans/*.json; do
    { cat "$scan"; printf '\0'; cat "$file"; } | seed feature_notes
  done
done

# GGUF: llama.cpp control vectors
for file in "$data"/steering/*.gguf; do seed gguf < "$file"; done
# Gemma Scope 2: config.json NUL params.safetensors (SAEs and a transcoder)
for config in "$data"/sae/gemma-scope-2-*/*/*/config.json; do
  [[ -f $config ]] || continue
  { cat "$config"; printf '\0'; cat "$(dirname "$config")/params.safetensors"; } | seed sae_folder
done
# Gemma Scope 1's params.npz (numpy.savez, ZIP64 local headers, a Fortran-order array), and each
# .npy entry alone, which the target parses without the zip around it.
for file in "$data"/sae/gemma-scope-*/*/*/*/params.npz; do
  [[ -f $file ]] || continue
  seed npz < "$file"
  python3 -c 'import sys, zipfile
archive = zipfile.ZipFile(sys.argv[1])
for name in archive.namelist():
    sys.stdout.buffer.write(archive.read(name))
    break' "$file" | seed npz
done

# WordPiece: vocab.txt [NUL tokenizer_config.json]
for dir in "$data"/models/* "$data"/tokenizers/*; do
  [[ -f $dir/vocab.txt ]] || continue
  seed wordpiece_vocab < "$dir/vocab.txt"
  [[ -f $dir/tokenizer_config.json ]] || continue
  { cat "$dir/vocab.txt"; printf '\0'; cat "$dir/tokenizer_config.json"; } | seed wordpiece_vocab
done

# Byte-level BPE: vocab.json NUL merges.txt [NUL tokenizer_config.json]
for dir in "$data"/models/* "$data"/tokenizers/*; do
  [[ -f $dir/vocab.json && -f $dir/merges.txt ]] || continue
  { cat "$dir/vocab.json"; printf '\0'; cat "$dir/merges.txt"; } | seed bpe_files
  [[ -f $dir/tokenizer_config.json ]] || continue
  { cat "$dir/vocab.json"; printf '\0'; cat "$dir/merges.txt"; printf '\0'
    cat "$dir/tokenizer_config.json"; } | seed bpe_files
done

# tokenizer.json [NUL tokenizer_config.json]
for dir in "$data"/models/* "$data"/tokenizers/*; do
  [[ -f $dir/tokenizer.json ]] || continue
  seed tokenizer_json < "$dir/tokenizer.json"
  seed shard_index < "$dir/tokenizer.json"
  [[ -f $dir/tokenizer_config.json ]] || continue
  { cat "$dir/tokenizer.json"; printf '\0'; cat "$dir/tokenizer_config.json"; } | seed tokenizer_json
done

# torch.save archives (tests/data/torch, valid and hostile), and each one's data.pkl alone, which
# the target stores in an archive itself.
for file in "$data"/torch/*.bin "$data"/torch/*/*.bin; do
  [[ $(stat -c %s "$file") -le $max_seed ]] || continue
  seed torch_checkpoint < "$file"
  python3 -c 'import sys, zipfile
try:
    archive = zipfile.ZipFile(sys.argv[1])
    name = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    sys.stdout.buffer.write(archive.read(name))
except Exception:
    pass' "$file" | seed torch_checkpoint
done

# Variant specs: the hand-written seeds, and the zoo configs (their `headlight` sections are specs).
for file in "$(dirname "$0")"/seeds/variant_spec/*.json "$data"/zoo/*/config.json; do
  seed variant_spec < "$file"
done

# Scenes and lessons: the hand-written seeds, the built-in lessons and each of their steps alone
# as a scene (docs/scenes.md).
seeds=$(dirname "$0")/seeds
lessons=$(dirname "$0")/../../resources/lessons
for file in "$seeds"/scene/*.json; do seed scene < "$file"; done
for file in "$seeds"/lesson/*.json "$lessons"/*.json; do seed lesson < "$file"; done
for file in "$lessons"/*.json; do
  python3 -c 'import json, sys
for step in json.load(open(sys.argv[1]))["steps"]: print(json.dumps(step))' "$file" |
    while IFS= read -r step; do printf '%s' "$step" | seed scene; done
done
