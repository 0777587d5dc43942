package exports

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
)

// bodyBlock is how much row XML is deflated at a time: big enough that
// each block's dictionary warms up, small enough to keep every core busy.
const bodyBlock = 1 << 20

// sheetBodies deflates the data sheets' rows as they are written, a block
// at a time on every core, into a temporary file, in order, and keeps for
// each sheet where its blocks are, their size before and after, and their
// CRC-32. Each block ends with a deflate sync flush and none is final, so
// that a sheet's blocks, after its own deflated start and before its
// deflated end, make one deflate stream. At most a few blocks are in
// flight, so memory stays flat however many rows there are.
type sheetBodies struct {
	file   *os.File
	jobs   chan *block
	order  chan *block
	done   chan error
	pool   sync.Pool
	cur    []byte
	sheet  int
	sheets []bodySegment
	mu     sync.Mutex // guards sheets while the writer runs
}

// bodySegment is one sheet's deflated rows in the temporary file.
type bodySegment struct {
	offset, size int64 // deflated
	raw          int64 // before
	crc          uint32
}

type block struct {
	sheet int
	raw   []byte
	out   bytes.Buffer
	crc   uint32
	ready chan struct{}
}

func newSheetBodies(dir string) (*sheetBodies, error) {
	f, err := os.CreateTemp(dir, "datadesk-sheet-*")
	if err != nil {
		return nil, fmt.Errorf("exports: %w", err)
	}
	_ = os.Remove(f.Name()) // gone when closed
	workers := max(runtime.GOMAXPROCS(0), 1)
	b := &sheetBodies{file: f, jobs: make(chan *block, workers), order: make(chan *block, 2*workers+2),
		done: make(chan error, 1), sheets: []bodySegment{{}}}
	b.pool.New = func() any { return make([]byte, 0, bodyBlock+64<<10) }
	b.cur = b.pool.Get().([]byte)
	for range workers {
		go b.deflate()
	}
	go b.write()
	return b, nil
}

// deflate compresses blocks as they come.
func (b *sheetBodies) deflate() {
	fw, _ := flate.NewWriter(io.Discard, flate.BestSpeed)
	for blk := range b.jobs {
		fw.Reset(&blk.out)
		_, _ = fw.Write(blk.raw)
		_ = fw.Flush()
		blk.crc = crc32.ChecksumIEEE(blk.raw)
		close(blk.ready)
	}
}

// write appends the deflated blocks to the file in the order they were
// sent.
func (b *sheetBodies) write() {
	var err error
	var offset int64
	for blk := range b.order {
		<-blk.ready
		if err == nil {
			_, err = b.file.Write(blk.out.Bytes())
		}
		b.mu.Lock()
		for len(b.sheets) <= blk.sheet {
			b.sheets = append(b.sheets, bodySegment{offset: offset})
		}
		s := &b.sheets[blk.sheet]
		s.crc = crc32Combine(s.crc, blk.crc, int64(len(blk.raw)))
		s.size += int64(blk.out.Len())
		s.raw += int64(len(blk.raw))
		b.mu.Unlock()
		offset += int64(blk.out.Len())
		b.pool.Put(blk.raw[:0])
	}
	b.done <- err
}

// rows returns the buffer to append row XML to; give it back with wrote.
func (b *sheetBodies) rows() []byte { return b.cur }

// wrote takes the buffer back and sends it to be deflated once it holds
// a block.
func (b *sheetBodies) wrote(buf []byte) {
	b.cur = buf
	if len(b.cur) >= bodyBlock {
		b.send()
	}
}

func (b *sheetBodies) send() {
	if len(b.cur) == 0 {
		return
	}
	blk := &block{sheet: b.sheet, raw: b.cur, ready: make(chan struct{})}
	b.order <- blk
	b.jobs <- blk
	b.cur = b.pool.Get().([]byte)
}

// nextSheet ends the current sheet's rows.
func (b *sheetBodies) nextSheet() {
	b.send()
	b.sheet++
}

// finish deflates what is left and waits for the file to hold it all.
func (b *sheetBodies) finish() error {
	b.send()
	close(b.jobs)
	close(b.order)
	err := <-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.sheets) <= b.sheet {
		// Sheets without rows: nothing in the file.
		var end int64
		if n := len(b.sheets); n > 0 {
			end = b.sheets[n-1].offset + b.sheets[n-1].size
		}
		b.sheets = append(b.sheets, bodySegment{offset: end})
	}
	return err
}

func (b *sheetBodies) close() { b.file.Close() }

// writeSheetPart writes a data sheet's part into zw: the skeleton's XML of
// the sheet (its header row and all but its rows) with the deflated rows
// of sheet i between the two halves, as one deflate stream.
func (b *sheetBodies) writeSheetPart(zw *zip.Writer, part *zip.File, i int) error {
	rc, err := part.Open()
	if err != nil {
		return err
	}
	skeleton, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	cut := bytes.LastIndex(skeleton, []byte("</sheetData>"))
	if cut < 0 {
		return errors.New("exports: a data sheet without sheetData")
	}
	head, tail := skeleton[:cut], skeleton[cut:]
	var dh, dt bytes.Buffer
	fw, _ := flate.NewWriter(&dh, flate.BestSpeed)
	_, _ = fw.Write(head)
	if err := fw.Flush(); err != nil {
		return err
	}
	fw.Reset(&dt)
	_, _ = fw.Write(tail)
	if err := fw.Close(); err != nil {
		return err
	}
	seg := b.sheets[i]
	fh := part.FileHeader
	fh.Method = zip.Deflate
	fh.CRC32 = crc32Combine(crc32Combine(crc32.ChecksumIEEE(head), seg.crc, seg.raw), crc32.ChecksumIEEE(tail), int64(len(tail)))
	fh.CompressedSize64 = uint64(int64(dh.Len()) + seg.size + int64(dt.Len()))
	fh.UncompressedSize64 = uint64(int64(len(head)) + seg.raw + int64(len(tail)))
	w, err := zw.CreateRaw(&fh)
	if err != nil {
		return err
	}
	if _, err := w.Write(dh.Bytes()); err != nil {
		return err
	}
	if _, err := io.Copy(w, io.NewSectionReader(b.file, seg.offset, seg.size)); err != nil {
		return err
	}
	_, err = w.Write(dt.Bytes())
	return err
}

// crc32Combine returns the CRC-32 (IEEE) of a followed by b from the
// CRCs of each and b's length: appending b's length of zero bits to a's
// register is a linear map, applied by squaring a matrix over GF(2) once
// per bit of the length (as zlib's crc32_combine does).
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = 0xedb88320 // the reversed IEEE polynomial: one zero bit
	for i, row := 1, uint32(1); i < 32; i, row = i+1, row<<1 {
		odd[i] = row
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		// Each round applies one more bit of the length, in bytes (the
		// first squaring gives eight zero bits).
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(m *[32]uint32, v uint32) uint32 {
	var sum uint32
	for i := 0; v != 0; i, v = i+1, v>>1 {
		if v&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}

func gf2Square(sq, m *[32]uint32) {
	for i := range 32 {
		sq[i] = gf2Times(m, m[i])
	}
}
