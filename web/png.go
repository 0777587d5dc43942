package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// pngBars draws bars as a PNG, as svgBars lays them out: a label, a bar
// and its value on each row, the title above.
func pngBars(bars []chartBar, name string) ([]byte, error) {
	const width, rowH, top = 720, 22, 26
	longest := 0
	peak := 0.0
	for _, br := range bars {
		longest = max(longest, len([]rune(br.label)))
		peak = math.Max(peak, math.Abs(br.value))
	}
	labelW := min(max(longest*7+12, 80), width/2)
	img := image.NewRGBA(image.Rect(0, 0, width, top+rowH*len(bars)+4))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	text := func(x, y int, s string) {
		d := &font.Drawer{Dst: img, Src: image.NewUniform(color.RGBA{0x1b, 0x1f, 0x24, 0xff}), Face: basicfont.Face7x13,
			Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	text(4, 16, name)
	blue := image.NewUniform(color.RGBA{0x09, 0x69, 0xda, 0xff})
	for i, br := range bars {
		y := top + i*rowH
		label := []rune(br.label)
		if len(label)*7 > labelW-10 {
			label = append(label[:max((labelW-10)/7-1, 1)], '…')
		}
		text(labelW-6-len(label)*7, y+15, string(label))
		w := 0
		if peak > 0 {
			w = int(float64(width-labelW-90) * math.Abs(br.value) / peak)
		}
		draw.Draw(img, image.Rect(labelW, y+3, labelW+w, y+rowH-3), blue, image.Point{}, draw.Src)
		shown := chartNumber(br.value)
		if br.null {
			shown = "no value"
		}
		text(labelW+w+4, y+15, shown)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return b.Bytes(), nil
}
