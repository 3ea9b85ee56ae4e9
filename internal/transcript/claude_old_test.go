package transcript

import "github.com/medallionhq/medallion/internal/jsonscan"

// The Claude Code record decoders as they were before records were read in
// place (commit 7a448c1), frozen here as the reference of
// TestClaudeInPlace: each value skipped whole by ObjectIter.Next, then
// walked from its Val.

func oldDecodeRecord(r *ccRecord, raw []byte) error {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "type":
			r.Type = jsonString(v)
		case "subtype":
			r.Subtype = jsonString(v)
		case "uuid":
			r.UUID = jsonString(v)
		case "sessionId":
			r.SessionID = jsonString(v)
		case "agentId":
			r.AgentID = jsonString(v)
		case "isSidechain":
			r.IsSidechain = jsonTrue(v)
		case "isMeta":
			r.IsMeta = jsonTrue(v)
		case "isCompactSummary":
			r.IsCompactSummary = jsonTrue(v)
		case "isApiErrorMessage":
			r.IsAPIErrorMessage = jsonTrue(v)
		case "planContent":
			r.ApprovedPlan = len(v) > 2 && v[0] == '"'

		case "cwd":
			r.CWD = jsonString(v)
		case "gitBranch":
			r.GitBranch = jsonString(v)
		case "timestamp":
			r.Timestamp = jsonString(v)
		case "message":
			if v[0] == '{' {
				r.Message = &ccMessage{}
				oldDecodeMessage(r.Message, v)
			}
		case "toolUseResult":
			oldDecodeUseResult(&r.ToolUseResult, v)
		case "content":
			oldDecodeContent(&r.Content, v)
		case "operation":
			r.Operation = jsonString(v)
		case "level":
			r.Level = jsonString(v)
		case "compactMetadata":
			m := jsonscan.NewObjectIter(v)
			for m.Next() {
				switch string(m.Key) {
				case "trigger":
					r.CompactTrigger = jsonString(m.Val)
				case "preTokens":
					r.CompactPreTokens = jsonInt(m.Val)
				}
			}
		case "hookErrors":
			a := jsonscan.NewArrayIter(v)
			for a.Next() {
				if s := jsonString(a.Val); s != "" {
					r.HookErrors = append(r.HookErrors, s)
				} else {
					r.HookErrors = append(r.HookErrors, rawJSON(a.Val))
				}
			}
		case "preventedContinuation":
			r.PreventedContinuation = jsonTrue(v)
		case "stopReason":
			r.StopReason = jsonString(v)
		case "prUrl":
			r.PRURL = jsonString(v)
		}
	}
	return it.Err()
}

func oldDecodeMessage(m *ccMessage, raw []byte) {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "id":
			m.ID = jsonString(it.Val)
		case "content":
			oldDecodeContent(&m.Content, it.Val)
		}
	}
}

func oldDecodeContent(c *ccContent, raw []byte) {
	switch raw[0] {
	case '"':
		c.Text = raw
	case '[':
		c.Blocks = []ccBlock{}
		it := jsonscan.NewArrayIter(raw)
		for it.Next() {
			var b ccBlock
			oldDecodeBlock(&b, it.Val)
			c.Blocks = append(c.Blocks, b)
		}
	}
}

func oldDecodeBlock(b *ccBlock, raw []byte) {
	it := jsonscan.NewObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "type":
			b.Type = jsonString(v)
		case "text":
			b.Text = v
		case "thinking":
			b.Thinking = v
		case "id":
			b.ID = jsonString(v)
		case "name":
			b.Name = jsonString(v)
		case "input":
			b.Input = v
		case "tool_use_id":
			b.ToolUseID = jsonString(v)
		case "content":
			oldDecodeContent(&b.Content, v)
		case "is_error":
			b.IsError = jsonTrue(v)
		case "source":
			b.HasSource = true
			s := jsonscan.NewObjectIter(v)
			for s.Next() {
				switch string(s.Key) {
				case "media_type":
					b.MediaType = jsonString(s.Val)
				case "url":
					b.URL = jsonString(s.Val)
				case "data":
					b.DataLen = max(len(s.Val)-2, 0)
				}
			}
		}
	}
}

func oldDecodeUseResult(u *ccUseResult, raw []byte) {
	u.Set = true
	switch raw[0] {
	case '"':
		u.ErrorText = jsonString(raw)
	case '{':
		it := jsonscan.NewObjectIter(raw)
		for it.Next() {
			switch string(it.Key) {
			case "filePath":
				u.FilePath = firstNonEmpty(u.FilePath, jsonString(it.Val))
			case "file":
				f := jsonscan.NewObjectIter(it.Val)
				for f.Next() {
					if string(f.Key) == "filePath" {
						u.FilePath = firstNonEmpty(u.FilePath, jsonString(f.Val))
					}
				}
			case "interrupted":
				u.Interrupted = jsonTrue(it.Val)
			case "agentId":
				u.AgentID = jsonString(it.Val)
			case "stdout":
				u.HasStdout = it.Val[0] == '"'
			}
		}
	}
}
