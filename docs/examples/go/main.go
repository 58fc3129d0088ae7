// The Go example bot: protocol 1 (docs/protocol.md) with the standard library's encoding/json.
//
// Plays the first legal action of every decision, in every game, and rebuilds the lists sent
// as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
// checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
// Build: go build -o bot main.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime"
)

// A list sent as a delta: its entries from index Start on (Start nil: the list is not sent).
type delta struct {
	Start *int
	Sent  []any
}

// The request's fields this bot reads; encoding/json skips the others without keeping them.
type message struct {
	Type        string          `json:"type"`
	ID          json.RawMessage `json:"id"`
	Deal        int             `json:"deal"`
	Observation struct {
		HistoryStart *int  `json:"history_start"`
		History      []any `json:"history"`
		TricksStart  *int  `json:"tricks_start"`
		Tricks       []any `json:"tricks"`
	} `json:"observation"`
	LegalActions []json.RawMessage `json:"legal_actions"`
	Summary      struct {
		Tricks []any `json:"tricks"`
	} `json:"summary"`
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	kept := map[string][]any{} // the whole lists rebuilt so far in this deal
	send := func(reply any) {
		line, _ := json.Marshal(reply)
		out.Write(append(line, '\n'))
		out.Flush()
	}
	for {
		// Enter Go's scheduler once per request. A goroutine that only ever blocks reading
		// stdin never does, and after 10 ms Go's sysmon thread takes it for one running too
		// long: it then takes its processor at every blocked read, waking every 20 us
		// (docs/sandbox.md, "Go's processors"; 10% more deals per second at a table).
		runtime.Gosched()
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "hello":
			send(map[string]string{"type": "ready", "name": "example-go"})
		case "act":
			o := m.Observation
			for key, d := range map[string]delta{
				"history": {o.HistoryStart, o.History}, "tricks": {o.TricksStart, o.Tricks},
			} {
				if d.Start != nil {
					whole := kept[key]
					if *d.Start < len(whole) {
						whole = whole[:*d.Start]
					}
					kept[key] = append(whole, d.Sent...)
				}
			}
			send(map[string]json.RawMessage{"id": m.ID, "action": m.LegalActions[0]})
		case "deal_end":
			tricks, played := kept["tricks"], m.Summary.Tricks
			ok := len(tricks) <= len(played)
			for i := 0; ok && i < len(tricks); i++ {
				ok = reflect.DeepEqual(tricks[i], played[i])
			}
			verdict := map[bool]string{true: "ok", false: "MISMATCH"}[ok]
			fmt.Fprintf(os.Stderr, "deal %d: %d tricks, %d history entries, %s\n",
				m.Deal, len(tricks), len(kept["history"]), verdict)
			kept = map[string][]any{}
		case "bye":
			return
		} // game_end, and notices of later versions: nothing to do
	}
}
