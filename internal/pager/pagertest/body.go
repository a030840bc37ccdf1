package pagertest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
)

// bodyFault is why [readJSON] refused a body.
type bodyFault int

const (
	bodyOK         bodyFault = iota
	bodyNotJSON              // the content type is not application/json
	bodyUnreadable           // reading the body failed
	bodyTooLarge             // the body is over the bound
	bodyInvalid              // decoding failed: the error says why
)

// readJSON reads r's JSON body, at most limit bytes of it, into v with
// only the documented fields, as both services do.
func readJSON(r *http.Request, limit int, v any) (bodyFault, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return bodyNotJSON, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return bodyUnreadable, err
	}
	if len(data) > limit {
		return bodyTooLarge, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyInvalid, err
	}
	return bodyOK, nil
}
