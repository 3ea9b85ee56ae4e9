package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
)

// itemAct answers POST /v1/item: the user forgets, edits, pins or unpins
// one item of a medallion, whoever wrote it. It takes the review
// actions' path — the same addresses, the same search of a scope for an
// address without its medallion, the same read-change-store of a user
// version — over every item rather than the model-made ones.
func (s *Server) itemAct(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	var req api.ItemActionRequest
	if err := decodeAction(r, &req, "pin"); err != nil {
		return nil, err
	}
	if !slices.Contains(api.ItemActions, req.Action) {
		return nil, badRequest("action must be %s (got %q)", strings.Join(api.ItemActions, ", "), req.Action)
	}
	if err := checkText(req.Action == api.ItemEdit, req.Action, req.Text); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Item) == "" {
		return nil, badRequest("give the item to %s, e.g. muse-state:D-003 or invariant:2 (medallionctl show ID lists them)", req.Action)
	}
	ctx := r.Context()
	id, ref, err := s.address(ctx, req.Item, req.Nodes, req.Tags, false)
	if err != nil {
		return nil, err
	}
	var ch api.ItemChange
	stored, err := s.changeItem(ctx, id, ref, anyItem, allItems, func(m *medallion.Medallion, it located) bool {
		var changed bool
		ch, changed = hold(m, it, req.Action, strings.TrimSpace(req.Text))
		return changed
	})
	if err != nil {
		return nil, err
	}
	ch.Version = stored.Meta.Version
	return api.ItemActionResponse{Changes: []api.ItemChange{ch}}, nil
}

// decodeAction reads the JSON body of an item or review action into v,
// refusing unknown fields and anything after the object; action names an
// example for an empty body.
func decodeAction(r *http.Request, v any, action string) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest(`the request body is empty; send an action such as {"action": %q, "item": "muse-state:D-003"}`, action)
		}
		return bodyError(err)
	}
	return expectEOF(dec)
}

// address resolves an item address "[MEDALLION_ID:]REF" to the medallion
// id and REF: an address without its medallion is looked for in the
// medallions of the scope nodes/tags (of all, when both are empty) that
// hold an item at REF, a model-made one when model is set.
func (s *Server) address(ctx context.Context, addr string, nodes, tags []string, model bool) (id, ref string, err error) {
	id, ref = api.ReviewAddress(addr)
	if err := checkRef(ref, addr); err != nil {
		return "", "", err
	}
	if id == "" {
		id, err = s.findMedallion(ctx, ref, nodes, tags, model)
		return id, ref, err
	}
	if !medallion.ValidID(id) {
		return "", "", badRequest("invalid medallion id %q in %q: want ID:ITEM such as muse-state:D-003", id, addr)
	}
	return id, ref, nil
}

// checkText checks the text of an action: required (and free of control
// characters) when want, absent otherwise.
func checkText(want bool, action, text string) error {
	switch {
	case !want && text != "":
		return badRequest("text goes with edit only, not %s", action)
	case want && strings.TrimSpace(text) == "":
		return badRequest("edit needs the new text")
	case strings.ContainsFunc(text, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return badRequest("the new text holds control characters: only newlines and tabs are kept")
	}
	return nil
}

// hold carries out an item action on the item it of m and reports what it
// did and whether m changed.
//
// forget removes the item with its evidence and review entries and
// records it in m.Forgotten (a fingerprint of its text, its events), which
// every curator consults (medallion.KeepUserHolds). edit replaces its text
// and remembers the old text as forgotten, so that a curator does not
// extract the old wording again beside the user's. pin and unpin add and
// remove its entry in m.Pinned.
func hold(m *medallion.Medallion, it located, action, text string) (api.ItemChange, bool) {
	ch := api.ItemChange{MedallionID: m.Meta.MedallionID, Version: m.Meta.Version, Ref: it.ref, Text: it.text}
	pinText := it.text
	if it.kind == kindDecision || it.kind == kindQuestion {
		pinText = ""
	}
	switch action {
	case api.ItemForget:
		m.Forget(it.kind, it.item, it.text)
		remove(m, it)
		m.DropTraces(it.item, it.text)
	case api.ItemEdit:
		ch.Text = text
		if text == it.text {
			ch.Note = "the text is already this"
			return ch, false
		}
		if it.kind != medallion.ItemSubsystem { // a subsystem keeps its name; its notes change
			m.ForgetWording(it.kind, it.text)
		}
		setText(m, it, text)
		m.Unforget(text)
	case api.ItemPin:
		if m.IsPinned(it.item, pinText) {
			ch.Note = "already pinned"
			return ch, false
		}
		if len(m.Pinned) >= medallion.MaxPinned {
			ch.Note = "too many pinned items: unpin one first"
			return ch, false
		}
		m.Pinned = append(m.Pinned, medallion.Pin{Item: it.item, Text: pinText})
	case api.ItemUnpin:
		i := m.PinIndex(it.item, pinText)
		if i < 0 {
			ch.Note = "not pinned"
			return ch, false
		}
		m.Pinned = slices.Delete(m.Pinned, i, i+1)
	}
	return ch, true
}
