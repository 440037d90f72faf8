#!/bin/bash
# The Debian package as a user gets it (tools/packaging/CMakeLists.txt): cpack builds
# headlight_VERSION_amd64.deb; its Depends name the Qt 6, Vulkan loader, OpenBLAS and font
# packages and it recommends Mesa's Vulkan drivers; unpacked with dpkg-deb -x into a throwaway
# root, it holds the program, the resources, the .desktop entry, the MIME types, the icons and the
# man page; and the unpacked program, run from outside the source tree with no HEADLIGHT_RESOURCES,
# prints its version, finds its own resources (../share/headlight), runs `inspect` on the
# installed default model and opens its window on that model under Xvfb.
# Why not dpkg -i: it would install into the CI machine's own /usr (docs/install.md).
# Usage: test_package.sh BUILD_DIR VERSION
set -euo pipefail
build=$1
version=$2
work=$(mktemp -d /tmp/headlight-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "test_package: $*" >&2
  exit 1
}

cd "$build"
cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb="$work/out/headlight_${version}_amd64.deb"
[[ -f $deb ]] || fail "cpack wrote no $(basename "$deb"): $(ls "$work/out")"

depends=$(dpkg-deb -f "$deb" Depends)
for package in libqt6core6 libqt6gui6 libqt6widgets6 libqt6svg6 libvulkan1 qt6-qpa-plugins \
  fonts-dejavu-core fonts-wqy-microhei fonts-noto-ui-core; do
  grep -Eq "(^|[ ,|])$package([ ,(]|$)" <<<"$depends" || fail "Depends lacks $package: $depends"
done
grep -q "libopenblas0-openmp" <<<"$depends" || fail "Depends lacks OpenBLAS's OpenMP build: $depends"
[[ $(dpkg-deb -f "$deb" Recommends) == *mesa-vulkan-drivers* ]] || fail "no Recommends of mesa-vulkan-drivers"
description=$(dpkg-deb -f "$deb" Description)
[[ $description == *"attention maps, statistics and internals"* && $description != *";"* ]] ||
  fail "the Description is not the prose of tools/packaging/CMakeLists.txt: $description"

root="$work/root"
dpkg-deb -x "$deb" "$root"
share="$root/usr/share"
for file in usr/bin/headlight usr/share/headlight/models/default.json \
  usr/share/headlight/models/pre_ln/model.safetensors usr/share/headlight/lessons \
  usr/share/headlight/texts usr/share/applications/headlight.desktop \
  usr/share/mime/packages/headlight.xml usr/share/icons/hicolor/scalable/apps/headlight.svg \
  usr/share/icons/hicolor/16x16/apps/headlight.png usr/share/icons/hicolor/256x256/apps/headlight.png \
  usr/share/man/man1/headlight.1.gz; do
  [[ -e $root/$file ]] || fail "the package lacks /$file"
done
file "$share/icons/hicolor/48x48/apps/headlight.png" | grep -q "48 x 48" || fail "the 48x48 icon is not 48 x 48"
grep -qx 'Exec=headlight %f' "$share/applications/headlight.desktop" || fail "the .desktop entry does not pass the file"
grep -q '^MimeType=application/x-headlight-scene+json;application/x-headlight-lesson+json;$' \
  "$share/applications/headlight.desktop" || fail "the .desktop entry declares no MIME types"
# The MIME types compile (shared-mime-info's own tool, run on the unpacked copy only).
if command -v update-mime-database >/dev/null; then
  update-mime-database "$share/mime"
  grep -q '^60:application/x-headlight-scene+json:\*\.scene\.json$' "$share/mime/globs2" ||
    fail "the scene MIME type has no *.scene.json glob"
  [[ -f $share/mime/application/x-headlight-lesson+json.xml ]] || fail "no lesson MIME type"
fi
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$share/applications/headlight.desktop"; fi
zcat "$share/man/man1/headlight.1.gz" | grep -q '^\.TH HEADLIGHT 1' || fail "the man page is not a roff page"

cd "$work"
unset HEADLIGHT_RESOURCES
# Why: the window remembers what it opened in ~/.config; the test must not write the user's.
export HOME="$work/home"
mkdir "$HOME"
program="$root/usr/bin/headlight"
[[ $("$program" --version) == "headlight $version" ]] || fail "--version: $("$program" --version)"
about=$("$program" about --backend cpu)
grep -qx "Resources: $share/headlight" <<<"$about" || fail "the installed program uses other resources: $about"
"$program" inspect --model "$share/headlight/models/pre_ln" --text "The cat sat on the mat." \
  --backend cpu --json >inspect.json || fail "inspect failed on the installed default model"
grep -q '"layers"' inspect.json || fail "inspect printed no model: $(head -c 200 inspect.json)"
xvfb-run -a -s "-screen 0 1280x800x24" "$program" --screenshot "$work/window.png" ||
  fail "the window did not show the installed default model"
file "$work/window.png" | grep -q "PNG image data" || fail "no window screenshot"
echo "test_package: ok ($(du -k "$deb" | cut -f1) KiB)"
