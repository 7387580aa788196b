#!/usr/bin/env bash
# Fuzzes a target for SECONDS from its seed corpus, then checks that the corpus reaches the paths
# the harness exists for.
#   fuzz_decode: the conformance, damaged and PNG test images ($CONVEYOR_TEST_DATA or
#     ../shared/data) and the bundled photos, each behind several settings bytes (the harness
#     strips the first byte as its settings), so decodable files run the window, scaled, DC-scan
#     and whole-image paths. Without the test images it reports a skip.
#   fuzz_shards: fuzz/seeds/shards (tar shards by GNU tar and webdataset, TFRecords and an Example
#     by the tfrecord package, indices by wds2idx and tfrecord2idx; fuzz/make_shard_seeds.py).
#   fuzz_program: fuzz/seeds/programs (the cases earlier runs found and a corpus merged from long
#     runs: fuzz/README.md).
set -euo pipefail
fuzzer=$1
seconds=$2
src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/seeds"
case "$(basename "$fuzzer")" in
  fuzz_decode)
    data=${CONVEYOR_TEST_DATA:-$src/../shared/data}
    if [ ! -d "$data/conformance" ] || [ ! -d "$data/damaged" ] || [ ! -d "$data/png" ]; then
      echo "SKIPPED: the seed corpus (conformance, damaged and PNG test images) was not found at $data"
      exit 0
    fi
    # Settings bytes: train at the DCT scale with the window (0x00), eval the same in f32, lenient (0x31),
    # train at full scale (0x04), eval of the whole image with Exif, bf16 NHWC (0xeb).
    n=0
    while IFS= read -r -d '' f; do
      for s in 00 31 04 eb; do
        { printf "\\x$s"; cat "$f"; } > "$work/seeds/$s-$n"
      done
      n=$((n + 1))
    done < <(find "$src/examples/data/samples" "$data/conformance" "$data/damaged" "$data/png" -type f \
               \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -print0)
    paths=(JpegDecoder::decode_columns JpegDecoder::decode JpegDecoder::progressive_stream drop_ac_scans
           set_frame_height detail::scale_axis ImageAugment::decode_into ops::cpu::resample
           PngDecoder::read_header PngDecoder::decode_region PngDecoder::pixels) ;;
  fuzz_shards)
    cp "$src"/fuzz/seeds/shards/* "$work/seeds/"
    paths=(TarShards::walk TarShards::read_index TarShards::add_samples TFRecordDataset::walk
           TFRecordDataset::read_index TFRecordDataset::parse proto::read_example proto::detail::read_feature) ;;
  fuzz_program)
    cp "$src"/fuzz/seeds/programs/* "$work/seeds/"
    paths=(ImageAugment::apply ImageAugment::stage Views::apply ops::cpu::apply_pixel_ops ops::cpu::gaussian_blur_image
           ops::pixel::Affine::apply ops::pixel::AdjustSharpness::apply ops::pixel::AdjustHue::apply
           ops::pixel::Equalize::table ops::pixel::Erase::value ops::pixel::Flip::apply RandomErasing::draw
           ops::random_resized_crop_box ops::cpu::resample conveyor_test::HostProgram::produce
           conveyor_test::HostDecodeJpegs::decode) ;;
  *) echo "smoke.sh: no seeds for $fuzzer" >&2; exit 2 ;;
esac
# A unit may take seconds instrumented (a program of large blurs, or Pillow's stepped affine
# engines, on a 700-pixel image, through both paths): the smoke run looks for crashes, not speed.
flags=(-max_len=65536 -timeout=60 -rss_limit_mb=2048)
"$fuzzer" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$work/seeds" 2>&1 | tail -n 12

# Each path must be reached: a harness whose inputs stop short of one fuzzes nothing there.
"$fuzzer" "${flags[@]}" -runs=0 -print_coverage=1 "$work/corpus" "$work/seeds" > "$work/coverage.txt" 2>&1
missing=0
for fn in "${paths[@]}"; do
  if grep -q "COVERED_FUNC: .*[: ]$fn(" "$work/coverage.txt"; then
    echo "covered: $fn"
  else
    echo "NOT covered: $fn"
    missing=1
  fi
done
[ "$missing" = 0 ] || { echo "the seed corpus does not reach every path"; grep -m 5 COVERED_FUNC "$work/coverage.txt"; exit 1; }
