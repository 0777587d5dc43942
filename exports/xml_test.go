package exports

import (
	"encoding/xml"
	"strings"
)

func xmlDecoder(s string) *xml.Decoder { return xml.NewDecoder(strings.NewReader(s)) }
