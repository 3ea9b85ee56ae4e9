// Package api holds the request and response types of medalliond's local
// HTTP API, shared by the server and the client so they cannot drift.
//
// The API is HTTP/1.1 + JSON over a Unix socket; every path is under /v1/:
//
//	GET  /v1/status                         Status
//	GET  /v1/medallions?node=N&tag=T&limit=L ListResponse (latest for scope)
//	POST /v1/medallions                     create; body Medallion; 201 PutResponse
//	PUT  /v1/medallions/{id}                create or update; body Medallion; PutResponse
//	    (an update whose body has meta.version > 0 must name the latest
//	    version or gets 409 conflict; version 0 updates on top of the latest)
//	GET  /v1/medallions/{id}[?version=N]    Medallion
//	GET  /v1/medallions/{id}/history        HistoryResponse
//
// Errors are an Error body with a fitting status: 400 bad input, 404 not
// found, 409 exists/conflict, 403 forbidden, 500 ours.
package api

import (
	"github.com/medallionhq/medallion/internal/medallion"
)

// VersionHeader carries the server's build version on every response; the
// client warns when it differs from its own.
const VersionHeader = "Medallion-Version"

// DefaultListLimit is used when a list request names no limit.
const DefaultListLimit = 10

// Error codes, stable strings a client can branch on.
const (
	CodeInvalid   = "invalid"   // 400: bad request or invalid medallion (see Fields)
	CodeNotFound  = "not_found" // 404
	CodeExists    = "exists"    // 409: create of an existing id
	CodeConflict  = "conflict"  // 409: update based on a stale version
	CodeForbidden = "forbidden" // 403: browser-originated request
	CodeInternal  = "internal"  // 500
)

// Error is the body of every non-2xx response.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Fields names each invalid field when Code is "invalid" because of a
	// medallion that failed validation.
	Fields []medallion.Problem `json:"fields,omitempty"`
}

// Status answers GET /v1/status.
type Status struct {
	Version    string `json:"version"`
	PID        int    `json:"pid"`
	StartedAt  string `json:"started_at"`
	UptimeSec  int64  `json:"uptime_seconds"`
	DataDir    string `json:"data_dir"`
	Socket     string `json:"socket"`
	Medallions int    `json:"medallions"`
	// StoreBytes is the on-disk size of the store (LSM + value log).
	StoreBytes int64 `json:"store_bytes"`
}

// ListResponse answers GET /v1/medallions.
type ListResponse struct {
	Medallions []*medallion.Medallion `json:"medallions"`
}

// PutResponse answers POST and PUT /v1/medallions.
type PutResponse struct {
	// Created is true when the request stored a new medallion (version 1).
	Created   bool                 `json:"created"`
	Medallion *medallion.Medallion `json:"medallion"`
}

// HistoryResponse answers GET /v1/medallions/{id}/history.
type HistoryResponse struct {
	ID       string                  `json:"medallion_id"`
	Versions []medallion.VersionInfo `json:"versions"`
}
