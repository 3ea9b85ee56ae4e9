package tail

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// FingerprintSize is how many leading bytes of a file the fingerprint
// covers once the file is that long. 4096 rather than 1024 because the
// first records of transcripts from one tool share long common prefixes
// (cwd, version, user type), so more bytes tell two files and a rewrite
// apart more surely; and one page costs a single small read per call.
const FingerprintSize = 4096

// Defaults for Options.
const (
	DefaultMaxLine       = 16 << 20
	DefaultMaxBatchBytes = 1 << 20
)

// Reasons counted in Result.Skipped.
const (
	SkipLineTooLong = "line_too_long"
	SkipBinary      = "binary"
)

// Reasons given in Result.Restart.
const (
	RestartTruncated = "truncated"
	RestartReplaced  = "replaced"
	RestartRewritten = "rewritten"
)

// bufSize is the read buffer: lines up to this size are handed out without
// a copy; longer ones are assembled in a second buffer up to MaxLine.
const bufSize = 256 << 10

// Position is where reading a file stands. The caller stores it in the same
// transaction as what it made of the lines, and hands it back to Read.
type Position struct {
	Dev, Ino uint64
	// Fingerprint is the hex SHA-256 of the first FingerprintLen bytes.
	Fingerprint string
	// FingerprintLen is min(size, FingerprintSize) when the fingerprint was
	// taken; it grows with the file until FingerprintSize, each time after
	// the shorter prefix was checked to be unchanged. Because it grows, the
	// fingerprint names a file's content, not a file: use Key for identity.
	FingerprintLen int
	// Offset is how many bytes were consumed; always just past a '\n', or 0.
	Offset int64
	// Size is the file size seen at the last read.
	Size int64
}

// Key identifies the file across renames: "<dev>:<ino>".
func (p Position) Key() string { return Key(p.Dev, p.Ino) }

// Key formats a device and inode as Position.Key does.
func Key(dev, ino uint64) string {
	return strconv.FormatUint(dev, 10) + ":" + strconv.FormatUint(ino, 10)
}

// Line is one complete line handed to Read's callback.
type Line struct {
	// Offset is the byte offset of the line's first byte in the file.
	Offset int64
	// Data is the line without its trailing "\n" and any "\r" before it.
	// It is valid only during the callback.
	Data []byte
}

// Options tunes Read. The zero value uses the defaults.
type Options struct {
	// MaxLine is the longest line delivered, in bytes without the
	// trailing '\n' (default DefaultMaxLine); longer lines are skipped and
	// counted.
	MaxLine int
	// MaxBatchBytes makes Read stop once it has consumed roughly this many
	// bytes (default DefaultMaxBatchBytes), so that the caller can commit
	// before going on. At least one line is always consumed.
	MaxBatchBytes int
}

// Result says what one Read did.
type Result struct {
	// Pos is the new position: past the last complete line consumed.
	Pos Position
	// Restart is "" or why reading started over at offset 0:
	// RestartTruncated, RestartReplaced or RestartRewritten.
	Restart string
	// Lines counts lines handed to the callback.
	Lines int
	// Skipped counts lines consumed but not delivered, by reason
	// (SkipLineTooLong, SkipBinary). Blank lines are not counted.
	Skipped map[string]int
	// Bytes is how many bytes this call consumed (Pos.Offset minus the
	// offset it started from).
	Bytes int64
	// More is true when Read stopped at MaxBatchBytes while unread bytes
	// that may hold complete lines remain: call Read again at once.
	More bool
}

// reader is the per-call scratch space, pooled because the ingester calls
// Read for every write to a file and a fresh 256 KiB buffer each time would
// keep the garbage collector busy.
type reader struct {
	br   *bufio.Reader
	head [FingerprintSize]byte
}

var readers = sync.Pool{New: func() any {
	return &reader{br: bufio.NewReaderSize(nil, bufSize)}
}}

// Identify returns the device, inode and size of the file at path without
// reading it, so that the caller can key its state by Key(dev, ino) and
// follow the file across renames. A missing file gives an error wrapping
// os.ErrNotExist.
func Identify(path string) (dev, ino uint64, size int64, err error) {
	return pathID(path)
}

// Read reads the complete lines of the file at path that follow prev (nil
// for a file never read) and calls fn for each, in file order. When fn
// returns an error, Read stops and returns it unchanged, with a Result that
// covers only the lines before the one fn refused.
//
// Read compares the open file with prev: a different device or inode means
// the path now names another file ("replaced"); a size below prev.Offset, or
// below the fingerprinted prefix, means "truncated"; a changed fingerprint
// means "rewritten". In each case reading starts over at offset 0.
// A file that does not exist gives an error wrapping os.ErrNotExist.
func Read(path string, prev *Position, opts Options, fn func(Line) error) (Result, error) {
	maxLine := opts.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	maxBatch := int64(opts.MaxBatchBytes)
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatchBytes
	}

	f, err := os.Open(path)
	if err != nil {
		return Result{}, err // *PathError: names the operation and path
	}
	defer f.Close()
	dev, ino, fi, err := fileID(f)
	if err != nil {
		return Result{}, err
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("read %s: not a regular file", path)
	}
	size := fi.Size()

	r := readers.Get().(*reader)
	defer func() {
		r.br.Reset(nil) // drop the reference to f
		readers.Put(r)
	}()

	// One read of the head serves both to check the old fingerprint and to
	// extend it.
	headLen := min(size, FingerprintSize)
	head := r.head[:0]
	if prev != nil && int64(prev.FingerprintLen) > headLen && int64(prev.FingerprintLen) <= size {
		// Only a Position from a build with a larger FingerprintSize.
		headLen = int64(prev.FingerprintLen)
		head = make([]byte, 0, headLen)
	}
	n, err := f.ReadAt(head[:headLen], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Result{}, fmt.Errorf("read head of %s: %w", path, err)
	}
	head = head[:n]
	if int64(n) < headLen {
		size = int64(n) // truncated between stat and read
	}

	res := Result{Pos: Position{Dev: dev, Ino: ino, Size: size}}
	start := int64(0)
	if prev != nil {
		switch {
		case prev.Dev != dev || prev.Ino != ino:
			res.Restart = RestartReplaced
		case size < prev.Offset || prev.FingerprintLen > len(head):
			res.Restart = RestartTruncated
		case prev.FingerprintLen > 0 && fingerprint(head[:prev.FingerprintLen]) != prev.Fingerprint:
			res.Restart = RestartRewritten
		default:
			start = prev.Offset
		}
	}
	if res.Restart == "" && prev != nil && prev.FingerprintLen == len(head) {
		res.Pos.Fingerprint, res.Pos.FingerprintLen = prev.Fingerprint, prev.FingerprintLen
	} else {
		res.Pos.Fingerprint, res.Pos.FingerprintLen = fingerprint(head), len(head)
	}
	res.Pos.Offset = start

	err = readLines(r.br, f, start, size, maxLine, maxBatch, &res, fn)
	if err != nil {
		var fe fnError
		if errors.As(err, &fe) {
			return res, fe.err
		}
		return res, fmt.Errorf("read %s: %w", path, err)
	}
	return res, nil
}

// fnError carries the callback's error through readLines untouched.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// readLines consumes the complete lines in [start, size) of f, updating
// res.Pos.Offset, res.Bytes, res.Lines and res.Skipped as each line is
// consumed.
func readLines(br *bufio.Reader, f *os.File, start, size int64, maxLine int, maxBatch int64, res *Result, fn func(Line) error) error {
	// Reading no further than the size seen keeps Offset <= Size; bytes
	// written since are picked up by the next call, which the write that
	// added them triggers.
	br.Reset(io.NewSectionReader(f, start, size-start))
	off := start
	for {
		if res.Bytes >= maxBatch {
			res.More = moreLines(br, size-off)
			return nil
		}
		data, err := br.ReadSlice('\n')
		n := len(data) // bytes of this line read so far, '\n' included
		tooLong := n > maxLine+1
		line := data
		if errors.Is(err, bufio.ErrBufferFull) {
			// Longer than the buffer: find its end first, holding nothing,
			// then read it whole in one allocation of its size, unless it
			// is over the cap. Assembling it as it streamed past held up
			// to MaxLine of a line that was then skipped anyway, and
			// append's doubling up to twice that: two 60 MiB lines took a
			// daemon from 18 to 75 MB.
			for errors.Is(err, bufio.ErrBufferFull) {
				data, err = br.ReadSlice('\n')
				n += len(data)
			}
			tooLong = n > maxLine+1
			if err == nil && !tooLong {
				line = make([]byte, n)
				if _, err := f.ReadAt(line, off); err != nil {
					return fmt.Errorf("read line at %d: %w", off, err)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			// An incomplete last line (possibly one already over the
			// cap): not consumed, so it is read, or skipped and counted,
			// exactly once when its '\n' arrives.
			return nil
		}
		if err != nil {
			return err
		}

		lineStart := off
		switch {
		case tooLong:
			res.skip(SkipLineTooLong)
		default:
			text := line[:len(line)-1]
			for len(text) > 0 && text[len(text)-1] == '\r' {
				text = text[:len(text)-1]
			}
			switch {
			case len(bytes.TrimSpace(text)) == 0:
				// Blank: nothing to deliver and nothing worth counting.
			case bytes.IndexByte(text, 0) >= 0:
				res.skip(SkipBinary)
			default:
				if err := fn(Line{Offset: lineStart, Data: text}); err != nil {
					return fnError{err}
				}
				res.Lines++
			}
		}
		off += int64(n)
		res.Bytes += int64(n)
		res.Pos.Offset = off
	}
}

// moreLines reports whether the remaining bytes may hold a complete line:
// certainly not when they are all buffered and hold no '\n'.
func moreLines(br *bufio.Reader, remaining int64) bool {
	if remaining <= 0 {
		return false
	}
	if int64(br.Buffered()) < remaining {
		return true
	}
	buf, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(buf, '\n') >= 0
}

func (r *Result) skip(reason string) {
	if r.Skipped == nil {
		r.Skipped = make(map[string]int)
	}
	r.Skipped[reason]++
}

func fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
