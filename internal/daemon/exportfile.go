package daemon

import (
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// An export holds every version whole, as JSON: 100 medallions
// checkpointed 40 times made 39 MB, written each day something changed and
// kept seven times over, where the store keeps each old version as a delta
// of a few hundred bytes (issue 12: a version should cost on disk about
// what changed). Consecutive versions differ little, so zstd at its
// fastest level makes that 0.53 MB for about 20 ms more CPU an export
// (BenchmarkExport). The daemon already links the zstd package (Badger
// uses it), and the zstd command reads the files (zstd -dc FILE |
// medallionctl import -).

// newExportWriter compresses what is written to it into w, on the
// caller's goroutine (one core at most for a daily job), with a 1 MiB
// window: a version's predecessor is within a few dozen KB, and the
// encoder's buffers follow the window. (WithLowerEncoderMem made it 2.6×
// slower.)
func newExportWriter(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
}

// openExport opens an export for reading its JSON Lines: a compressed
// one through zstd, a plain one an older build wrote as it is.
func openExport(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, exportSuffix) {
		return f, nil
	}
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &exportReader{Decoder: d, f: f}, nil
}

// exportReader reads a compressed export and closes its file with it.
type exportReader struct {
	*zstd.Decoder
	f *os.File
}

func (r *exportReader) Close() error {
	r.Decoder.Close()
	return r.f.Close()
}
