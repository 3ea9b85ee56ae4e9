package curate

import "testing"

func TestChoiceWeight(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"explicit decision", "I decided to store the tokens in an ETS table owned by a GenServer.", 3},
		{"instead of", "Used Result<T, E> instead of raising exceptions for factorial.", 2},
		{"question", "Should we use SQLite instead of Postgres for the cache?", 0},
		{"hedge", "We could use SQLite instead of Postgres for the cache.", 0},
		{"narration", "Let me read the config instead of guessing at it.", 0},
		{"table row", "| 6 | Adapter | Use the manager instead of the orchestrator |", 0},
		{"too short", "Going with SQLite.", 0},
		{"no cue", "The tests pass and the migration ran cleanly on SQLite.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := choiceWeight(tt.s); got != tt.want {
				t.Errorf("choiceWeight(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

func TestRationaleOf(t *testing.T) {
	tests := []struct{ s, want string }{
		{"I'll use an enum because the list nests one level.", "Because the list nests one level."},
		{"I'll use an enum for nested items.", ""},
	}
	for _, tt := range tests {
		if got := rationaleOf(tt.s); got != tt.want {
			t.Errorf("rationaleOf(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
