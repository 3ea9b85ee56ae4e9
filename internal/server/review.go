package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// reviewRetries is how many times an action is applied to a freshly read
// medallion when another writer (the curator, a put) stored a version
// between the read and the write.
const reviewRetries = 3

// maxNamed caps how many valid addresses an error message lists.
const maxNamed = 20

// The kinds of ReviewItem.Kind that are not list names.
const (
	kindDecision = medallion.KindDecision
	kindQuestion = medallion.KindQuestion
)

// located is one item found in a medallion.
type located struct {
	kind string
	// item and text identify the item the way Review entries do: the id
	// for decisions and questions, the list name (or "summary") and the
	// text for the rest (a subsystem's name). A retry finds the item again
	// by them, never by its position, which another writer may have
	// shifted.
	item, text string
	ref        string // the address within the medallion
	review     int    // index in Medallion.Review, -1 when no model wrote it
}

// allItems lists every item of m, in review order: summary, decisions,
// questions, the lists, then the subsystems.
func allItems(m *medallion.Medallion) []located {
	var out []located
	add := func(kind, item, text, ref string) {
		out = append(out, located{kind: kind, item: item, text: text, ref: ref, review: m.ReviewFor(item, text)})
	}
	if h := strings.TrimSpace(m.Summary.HighLevel); h != "" {
		add(medallion.ItemSummary, medallion.ItemSummary, m.Summary.HighLevel, medallion.ItemSummary)
	}
	for _, d := range m.Decisions {
		add(kindDecision, d.ID, d.Statement, d.ID)
	}
	for _, q := range m.OpenQuestions {
		add(kindQuestion, q.ID, q.Question, q.ID)
	}
	for _, name := range medallion.ReviewLists {
		for i, v := range *m.List(name) {
			add(name, name, v, name+":"+strconv.Itoa(i+1))
		}
	}
	for i, sub := range m.Summary.Subsystems {
		out = append(out, located{kind: medallion.ItemSubsystem, item: medallion.ItemSubsystem, text: sub.Name,
			ref: medallion.ItemSubsystem + ":" + strconv.Itoa(i+1), review: -1})
	}
	return out
}

// modelItems lists the model-made items still in m, in review order.
func modelItems(m *medallion.Medallion) []located {
	return slices.DeleteFunc(allItems(m), func(it located) bool { return it.review < 0 })
}

// reviewItem describes one model-made item for GET /v1/review.
func reviewItem(m *medallion.Medallion, it located) api.ReviewItem {
	r := m.Review[it.review]
	out := api.ReviewItem{
		MedallionID: m.Meta.MedallionID, Version: m.Meta.Version,
		Ref: it.ref, Kind: it.kind, Text: it.text, Source: r.Source, State: r.State,
		Evidence: evidenceOf(m, it.item, it.text),
	}
	switch it.kind {
	case kindDecision:
		if i := slices.IndexFunc(m.Decisions, func(d medallion.Decision) bool { return d.ID == it.item }); i >= 0 {
			d := m.Decisions[i]
			out.Detail = fmt.Sprintf("confidence %.2f", d.Confidence)
			if strings.TrimSpace(d.Rationale) != "" {
				out.Detail = "why: " + d.Rationale + " (" + out.Detail + ")"
			}
		}
	case kindQuestion:
		if i := slices.IndexFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == it.item }); i >= 0 {
			q := m.OpenQuestions[i]
			out.Detail = "priority " + string(q.Priority)
			if len(q.BlockedOn) > 0 {
				out.Detail += "; blocked on: " + strings.Join(q.BlockedOn, "; ")
			}
		}
	}
	return out
}

// rejectedItems describes the rejected entries of m: their items have
// left the medallion, so only the entry's text remains.
func rejectedItems(m *medallion.Medallion) []api.ReviewItem {
	var out []api.ReviewItem
	for _, r := range m.Review {
		if r.State != medallion.ReviewRejected {
			continue
		}
		// The item has left the medallion, so only its name tells what
		// it was; Tier 1 numbers decisions D-… and questions Q-….
		kind := r.Item
		switch {
		case slices.Contains(medallion.ReviewLists, kind) || kind == medallion.ItemSummary:
		case strings.HasPrefix(kind, "D-"):
			kind = kindDecision
		case strings.HasPrefix(kind, "Q-"):
			kind = kindQuestion
		default:
			kind = "item"
		}
		out = append(out, api.ReviewItem{
			MedallionID: m.Meta.MedallionID, Version: m.Meta.Version,
			Ref: r.Item, Kind: kind, Text: r.Text, Source: r.Source, State: r.State,
			Evidence: evidenceOf(m, r.Item, r.Text),
		})
	}
	return out
}

// evidenceOf returns m's evidence entries for one item: by id for
// decisions and questions, by list name and text for the rest.
func evidenceOf(m *medallion.Medallion, item, text string) []medallion.Evidence {
	byText := item == medallion.ItemSummary || slices.Contains(medallion.ReviewLists, item)
	out := []medallion.Evidence{}
	for _, e := range m.Evidence {
		if e.Item == item && (!byText || strings.TrimSpace(e.Text) == strings.TrimSpace(text)) {
			out = append(out, e)
		}
	}
	return out
}

// reviewMedallions returns the latest medallions of a scope, or every
// medallion when the scope is empty.
func (s *Server) reviewMedallions(ctx context.Context, nodes, tags []string) ([]*medallion.Medallion, error) {
	for _, v := range append(slices.Clone(nodes), tags...) {
		if strings.TrimSpace(v) == "" {
			return nil, badRequest("node and tag must not be empty")
		}
	}
	if len(nodes) > 0 || len(tags) > 0 {
		return s.cfg.Store.LatestForScope(ctx, medallion.Scope{GraphNodes: nodes, Tags: tags}, maxListLimit)
	}
	lister, ok := s.cfg.Store.(store.IDLister)
	if !ok {
		return nil, badRequest("this daemon's store cannot list every medallion: give a node or tag")
	}
	ids, err := lister.IDs(ctx)
	if err != nil {
		return nil, err
	}
	var out []*medallion.Medallion
	for _, id := range ids {
		m, err := s.cfg.Store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if m != nil { // deleted meanwhile
			out = append(out, m)
		}
	}
	return out, nil
}

// review answers GET /v1/review.
func (s *Server) review(r *http.Request) (any, error) {
	q, err := query(r, "node", "tag", "state")
	if err != nil {
		return nil, err
	}
	state := string(medallion.ReviewPending)
	if v, ok, err := single(q, "state"); err != nil {
		return nil, err
	} else if ok {
		if v != api.ReviewStateAll && !slices.Contains(medallion.ReviewStates, medallion.ReviewState(v)) {
			return nil, badRequest("state must be pending, approved, rejected or all (got %q)", v)
		}
		state = v
	}
	ms, err := s.reviewMedallions(r.Context(), q["node"], q["tag"])
	if err != nil {
		return nil, err
	}
	resp := api.ReviewResponse{Items: []api.ReviewItem{}, Medallions: len(ms)}
	for _, m := range ms {
		for _, it := range modelItems(m) {
			if item := reviewItem(m, it); state == api.ReviewStateAll || string(item.State) == state {
				resp.Items = append(resp.Items, item)
			}
		}
		if state == api.ReviewStateAll || state == string(medallion.ReviewRejected) {
			resp.Items = append(resp.Items, rejectedItems(m)...)
		}
	}
	return resp, nil
}

// countPending counts the pending model-made items of every medallion,
// for Status.LLM; -1 when the store cannot list them.
func (s *Server) countPending(ctx context.Context) (int, error) {
	if _, ok := s.cfg.Store.(store.IDLister); !ok {
		return -1, nil
	}
	ms, err := s.reviewMedallions(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		for _, it := range modelItems(m) {
			if m.Review[it.review].State == medallion.ReviewPending {
				n++
			}
		}
	}
	return n, nil
}

// reviewAct answers POST /v1/review.
func (s *Server) reviewAct(r *http.Request) (any, error) {
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	var req api.ReviewActionRequest
	if err := decodeAction(r, &req, "approve"); err != nil {
		return nil, err
	}
	switch req.Action {
	case api.ReviewApprove, api.ReviewReject, api.ReviewEdit:
		if err := checkText(req.Action == api.ReviewEdit, req.Action, req.Text); err != nil {
			return nil, err
		}
		if req.Action == api.ReviewEdit && req.All {
			return nil, badRequest("edit acts on one item: give item, not all")
		}
	default:
		return nil, badRequest("action must be approve, reject or edit (got %q)", req.Action)
	}
	ctx := r.Context()
	if req.All {
		if req.Item != "" {
			return nil, badRequest("give item or all, not both")
		}
		if len(req.Nodes) == 0 && len(req.Tags) == 0 {
			return nil, badRequest("all needs a scope (nodes or tags), so that one command cannot settle every medallion at once")
		}
		return s.reviewAll(ctx, req)
	}
	if strings.TrimSpace(req.Item) == "" {
		return nil, badRequest("give the item to %s, e.g. muse-state:D-003 or invariant:2 (medallionctl review lists them)", req.Action)
	}
	id, ref, err := s.address(ctx, req.Item, req.Nodes, req.Tags, true)
	if err != nil {
		return nil, err
	}
	var ch api.ReviewChange
	stored, err := s.changeItem(ctx, id, ref, locate, modelItems, func(m *medallion.Medallion, it located) bool {
		var changed bool
		ch, changed = apply(m, it, req.Action, req.Text)
		return changed
	})
	if err != nil {
		return nil, err
	}
	ch.Version = stored.Meta.Version
	return api.ReviewActionResponse{Changes: []api.ReviewChange{ch}}, nil
}

// changeItem applies act to the item at ref of medallion id and stores
// the result as the user's version (changeMedallion). find locates the
// item the first time; when another writer stored a version meanwhile,
// the item is found again among choices by what it is, never by its
// position, which that writer may have shifted. It returns the version
// stored, or the current one when act changed nothing.
func (s *Server) changeItem(ctx context.Context, id, ref string, find func(*medallion.Medallion, string) (located, error),
	choices func(*medallion.Medallion) []located, act func(*medallion.Medallion, located) bool) (*medallion.Medallion, error) {
	var target *located
	return s.changeMedallion(ctx, id, func(m *medallion.Medallion) (bool, error) {
		if target == nil {
			it, err := find(m, ref)
			if err != nil {
				return false, err
			}
			target = &it
		} else {
			i := slices.IndexFunc(choices(m), func(it located) bool { return it.item == target.item && it.text == target.text })
			if i < 0 {
				return false, &apiError{http.StatusConflict, api.CodeConflict,
					fmt.Sprintf("%s changed in medallion %s while you were changing it; list it again and retry", target.ref, id)}
			}
			it := choices(m)[i]
			it.ref = target.ref
			target = &it
		}
		return act(m, *target), nil
	}, nil)
}

// reviewAll approves or rejects every pending item of the medallions of a
// scope, one new version per medallion that had any.
func (s *Server) reviewAll(ctx context.Context, req api.ReviewActionRequest) (any, error) {
	ms, err := s.reviewMedallions(ctx, req.Nodes, req.Tags)
	if err != nil {
		return nil, err
	}
	resp := api.ReviewActionResponse{Changes: []api.ReviewChange{}}
	for _, m := range ms {
		var changes []api.ReviewChange
		_, err := s.changeMedallion(ctx, m.Meta.MedallionID, func(m *medallion.Medallion) (bool, error) {
			changes = changes[:0]
			var pending []located
			for _, it := range modelItems(m) {
				if m.Review[it.review].State == medallion.ReviewPending {
					pending = append(pending, it)
				}
			}
			// Rejecting removes items, which shifts the positions of
			// those after them: apply from the last to the first, then
			// report in review order.
			for i := len(pending) - 1; i >= 0; i-- {
				ch, _ := apply(m, pending[i], req.Action, "")
				changes = append(changes, ch)
			}
			slices.Reverse(changes)
			return len(changes) > 0, nil
		}, func(stored *medallion.Medallion) {
			for i := range changes {
				changes[i].Version = stored.Meta.Version
			}
		})
		if err != nil {
			return nil, err
		}
		resp.Changes = append(resp.Changes, changes...)
	}
	return resp, nil
}

// findMedallion finds the one medallion (of the scope, or of all) holding
// an item at ref: a model-made one when model is set (review), any item
// otherwise.
func (s *Server) findMedallion(ctx context.Context, ref string, nodes, tags []string, model bool) (string, error) {
	ms, err := s.reviewMedallions(ctx, nodes, tags)
	if err != nil {
		return "", err
	}
	what, find, choices := "item", anyItem, allItems
	if model {
		what, find, choices = "model-made item", locate, modelItems
	}
	var holders, plain []string // medallions holding the item, or (model) someone else's item at ref
	for _, m := range ms {
		_, err := find(m, ref)
		switch {
		case err == nil:
			holders = append(holders, m.Meta.MedallionID)
		case isBadRequest(err):
			plain = append(plain, m.Meta.MedallionID)
		}
	}
	switch {
	case len(holders) == 1:
		return holders[0], nil
	case len(holders) > 1:
		return "", badRequest("%s is %s in %d medallions (%s): say which, e.g. %s:%s",
			ref, aOr(what), len(holders), strings.Join(capList(holders), ", "), holders[0], ref)
	case model && len(plain) > 0:
		where := "medallion " + plain[0]
		if len(plain) > 1 {
			where = "medallions " + strings.Join(capList(plain), ", ")
		}
		return "", badRequest("%s in %s was not written by a model: there is nothing to review", ref, where)
	}
	var valid []string
	for _, m := range ms {
		for _, it := range choices(m) {
			if it.review < 0 || m.Review[it.review].State != medallion.ReviewRejected {
				valid = append(valid, m.Meta.MedallionID+":"+it.ref)
			}
		}
	}
	if len(valid) == 0 {
		return "", notFound("no %s %s: no medallion%s holds %s to act on", what, ref, scopeWords(nodes, tags), aOr(what))
	}
	return "", notFound("no %s %s%s; the %ss are: %s", what, ref, scopeWords(nodes, tags), what, strings.Join(capList(valid), ", "))
}

// aOr puts "a" or "an" before a noun.
func aOr(noun string) string {
	if strings.HasPrefix(noun, "i") {
		return "an " + noun
	}
	return "a " + noun
}

// anyItem finds the item at ref in m, whoever wrote it.
func anyItem(m *medallion.Medallion, ref string) (located, error) {
	return findItem(m, ref, "item", allItems)
}

func scopeWords(nodes, tags []string) string {
	if len(nodes)+len(tags) == 0 {
		return ""
	}
	return " in scope " + strings.Join(append(slices.Clone(nodes), tags...), ", ")
}

func capList(names []string) []string {
	if len(names) <= maxNamed {
		return names
	}
	return append(slices.Clone(names[:maxNamed]), fmt.Sprintf("… (%d more)", len(names)-maxNamed))
}

func isBadRequest(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusBadRequest
}

// checkRef refuses a REF (of the address addr) that can name no item in
// any medallion, before any medallion is searched for it.
func checkRef(ref, addr string) error {
	name, pos, isList := strings.Cut(ref, ":")
	switch {
	case strings.TrimSpace(ref) == "":
		return badRequest("%q names no item: want ID:ITEM such as muse-state:D-003, or ITEM alone", addr)
	case slices.Contains(medallion.ItemLists, ref):
		return badRequest("%s needs the item's position in the list, e.g. %s:1", ref, ref)
	case isList && slices.Contains(medallion.ItemLists, name):
		if n, err := strconv.Atoi(pos); err != nil || n < 1 {
			return badRequest("%s: the position in the list must be a whole number from 1 (got %q)", ref, pos)
		}
	}
	return nil
}

// locate finds the model-made item at ref in m. An address naming no item
// is a 404 that lists the model-made items of m; an item no model wrote is
// a 400.
func locate(m *medallion.Medallion, ref string) (located, error) {
	it, err := findItem(m, ref, "model-made item", modelItems)
	if err == nil && it.review < 0 {
		return located{}, badRequest("%s in medallion %s was not written by a model: there is nothing to review", ref, m.Meta.MedallionID)
	}
	return it, err
}

// findItem finds the item at ref in m. An address naming no item is a 404
// that names the addresses of choices(m), noun saying what they are.
func findItem(m *medallion.Medallion, ref, noun string, choices func(*medallion.Medallion) []located) (located, error) {
	id := m.Meta.MedallionID
	notThere := func(format string, args ...any) error {
		var valid []string
		for _, it := range choices(m) {
			valid = append(valid, it.ref)
		}
		msg := fmt.Sprintf(format, args...)
		if len(valid) == 0 {
			return notFound("%s; medallion %s holds no %s", msg, id, noun)
		}
		return notFound("%s; its %ss are: %s", msg, noun, strings.Join(capList(valid), ", "))
	}
	name, pos, isList := strings.Cut(ref, ":")
	switch {
	case isList:
		if !slices.Contains(medallion.ItemLists, name) {
			return located{}, notThere("no item %q in medallion %s (lists are %s)", ref, id, strings.Join(medallion.ItemLists, ", "))
		}
		n, err := strconv.Atoi(pos)
		if err != nil || n < 1 {
			return located{}, badRequest("%s: the position in the list must be a whole number from 1 (got %q)", ref, pos)
		}
		if size := listLen(m, name); n > size {
			return located{}, notThere("%s: medallion %s has %d %s items", ref, id, size, name)
		}
	case slices.Contains(medallion.ItemLists, ref):
		return located{}, badRequest("%s needs the item's position in the list, e.g. %s:1", ref, ref)
	case ref == medallion.ItemSummary && strings.TrimSpace(m.Summary.HighLevel) == "":
		return located{}, notThere("medallion %s has no summary", id)
	}
	for _, it := range allItems(m) {
		if it.ref == ref {
			return it, nil
		}
	}
	return located{}, notThere("no item %q in medallion %s", ref, id)
}

// listLen is the length of the list name (one of medallion.ItemLists).
func listLen(m *medallion.Medallion, name string) int {
	if name == medallion.ItemSubsystem {
		return len(m.Summary.Subsystems)
	}
	return len(*m.List(name))
}

// apply carries out action on the item it of m and reports what it did
// and whether m changed. Approving an approved item changes nothing.
// Rejecting removes the item from its list (a summary is cleared) and
// keeps the review entry, with the item's text, so no later curation
// brings it back. Editing sets the text and approves.
func apply(m *medallion.Medallion, it located, action, text string) (api.ReviewChange, bool) {
	r := &m.Review[it.review]
	ch := api.ReviewChange{ItemChange: api.ItemChange{MedallionID: m.Meta.MedallionID, Version: m.Meta.Version, Ref: it.ref, Text: it.text}}
	switch action {
	case api.ReviewApprove:
		ch.State = medallion.ReviewApproved
		if r.State == medallion.ReviewApproved {
			ch.Note = "already approved"
			return ch, false
		}
		r.State = medallion.ReviewApproved
	case api.ReviewReject:
		ch.State = medallion.ReviewRejected
		r.State = medallion.ReviewRejected
		if strings.TrimSpace(r.Text) == "" {
			r.Text = it.text
		}
		remove(m, it)
	case api.ReviewEdit:
		text = strings.TrimSpace(text)
		ch.State, ch.Text = medallion.ReviewApproved, text
		if r.State == medallion.ReviewApproved && text == it.text {
			ch.Note = "already approved with this text"
			return ch, false
		}
		setText(m, it, text)
	}
	return ch, true
}

// remove takes the item it out of m: a decision or question is deleted, a
// list item or subsystem leaves its list, the summary is cleared. Its
// evidence and review entries stay; the caller decides about them.
func remove(m *medallion.Medallion, it located) {
	switch it.kind {
	case kindDecision:
		m.Decisions = slices.DeleteFunc(m.Decisions, func(d medallion.Decision) bool { return d.ID == it.item })
	case kindQuestion:
		m.OpenQuestions = slices.DeleteFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == it.item })
	case medallion.ItemSummary:
		m.Summary.HighLevel = ""
	case medallion.ItemSubsystem:
		m.Summary.Subsystems = slices.DeleteFunc(m.Summary.Subsystems, func(s medallion.Subsystem) bool { return s.Name == it.text })
	default:
		list := m.List(it.kind)
		if i := slices.Index(*list, it.text); i >= 0 {
			*list = slices.Delete(*list, i, i+1)
		}
	}
}

// setText replaces the text of the item it of m — a decision's statement,
// a question, a list item, the summary, a subsystem's notes — keeping the
// rest of it. A model-made item's review entry follows it and is approved
// (its user wrote it now); so do a list item's evidence and a pin.
func setText(m *medallion.Medallion, it located, text string) {
	if it.review >= 0 {
		r := &m.Review[it.review]
		r.State, r.Text = medallion.ReviewApproved, text
	}
	switch it.kind {
	case kindDecision:
		i := slices.IndexFunc(m.Decisions, func(d medallion.Decision) bool { return d.ID == it.item })
		m.Decisions[i].Statement = text
	case kindQuestion:
		i := slices.IndexFunc(m.OpenQuestions, func(q medallion.OpenQuestion) bool { return q.ID == it.item })
		m.OpenQuestions[i].Question = text
	case medallion.ItemSummary:
		m.Summary.HighLevel = text
	case medallion.ItemSubsystem:
		i := slices.IndexFunc(m.Summary.Subsystems, func(s medallion.Subsystem) bool { return s.Name == it.text })
		m.Summary.Subsystems[i].Notes = text
		return // the name, which names the subsystem, stays
	default:
		list := m.List(it.kind)
		if i := slices.Index(*list, it.text); i >= 0 {
			(*list)[i] = text
		}
		for i := range m.Evidence {
			if e := &m.Evidence[i]; e.Item == it.item && e.Text == it.text {
				e.Text = text
			}
		}
	}
	if i := m.PinIndex(it.item, it.text); i >= 0 && it.kind != kindDecision && it.kind != kindQuestion {
		m.Pinned[i].Text = text
	}
}

// changeMedallion reads medallion id, lets change modify a copy and, when
// it reports a change, stores the copy as the next version with
// meta.model "user". A version stored by someone else in between makes it
// read and change again, up to reviewRetries times, then answer 409.
// stored, when not nil, sees the version stored.
func (s *Server) changeMedallion(ctx context.Context, id string, change func(*medallion.Medallion) (bool, error), stored func(*medallion.Medallion)) (*medallion.Medallion, error) {
	return s.changeMedallionAs(ctx, id, "user", change, stored)
}

// changeMedallionAs is changeMedallion storing the version with meta.model
// model.
func (s *Server) changeMedallionAs(ctx context.Context, id, model string, change func(*medallion.Medallion) (bool, error), stored func(*medallion.Medallion)) (*medallion.Medallion, error) {
	for attempt := 1; ; attempt++ {
		cur, err := s.cfg.Store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, notFound("medallion %s not found", id)
		}
		next := cur.Clone()
		changed, err := change(next)
		if err != nil {
			return nil, err
		}
		if !changed {
			return cur, nil
		}
		next.Meta.Model = model
		next.Meta.Version = cur.Meta.Version
		out, err := s.cfg.Store.Update(ctx, next)
		if errors.Is(err, store.ErrConflict) {
			if attempt < reviewRetries {
				continue
			}
			return nil, &apiError{http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("medallion %s kept changing while the review was stored (%d tries); run the command again", id, attempt)}
		}
		if err != nil {
			return nil, err
		}
		if stored != nil {
			stored(out)
		}
		return out, nil
	}
}
