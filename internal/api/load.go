package api

// Load endpoint:
//
//	GET /v1/load?node=N&tag=T&cwd=DIR&limit=L&budget=B&format=F  LoadResponse
//
// node/tag name the scope, or cwd names a directory the daemon resolves to
// graph nodes (never both). The answer is the save file of the latest
// active medallions for the scope, rendered to fit the token budget.
//
//	GET /v1/hook?cwd=DIR&budget=B  text/markdown, or 204 No Content
//
// is the load the SessionStart hook makes (cwd, the default limit,
// markdown), answered with the save file's text alone: what the hook adds
// to the session, as in the answer file the daemon keeps for the next hook
// (internal/hookcache). 204 means no medallion exists for the directory.
// The hook runs before every agent session, and decoding a LoadResponse
// (encoding/json's validation, unquoting and reflection over a 5 KB text)
// was about two thirds of the CPU a hook that asked spent beyond one that
// read the kept file.

// DefaultLoadLimit is how many medallions a load renders when it names no
// limit: the few most recently updated for the scope.
const DefaultLoadLimit = 3

// LoadRequest names what GET /v1/load renders; zero values take the
// defaults (limit DefaultLoadLimit, budget 1500, format markdown).
type LoadRequest struct {
	Nodes  []string
	Tags   []string
	CWD    string // an absolute directory, instead of Nodes and Tags
	Limit  int
	Budget int
	Format string // "markdown" or "json"
}

// LoadResponse answers GET /v1/load.
type LoadResponse struct {
	// Text is the rendered save file; Tokens its estimated size, never
	// above Budget.
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	Budget int    `json:"budget"`
	// Scope is the graph nodes and tags the load was for (cwd resolved).
	Scope []string `json:"scope"`
	// Medallions are the ids rendered, most recent first; empty when no
	// medallion exists for the scope.
	Medallions []string `json:"medallions"`
	// Cut names what was left out to fit the budget.
	Cut []string `json:"cut"`
}
