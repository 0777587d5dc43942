package catalog

import "time"

// Labels are what an AI wrote about a table: a title, a caption, column
// descriptions and notes. They are kept apart from the data and never
// change a cell.
type Labels struct {
	Title   string            `json:"title,omitempty"`
	Caption string            `json:"caption,omitempty"`
	Columns map[string]string `json:"columns,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
	// Author and UpdatedAt say who wrote them and when.
	Author    string    `json:"author"`
	UpdatedAt time.Time `json:"updated_at"`
}
