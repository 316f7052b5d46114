package rollout

import (
	"maps"
	"reflect"
	"sync"
)

// Clone returns a copy of r that shares nothing modifiable with it: a
// writer changes the clone of a record shared read-only (Decoded) instead
// of decoding the whole record again. Its pod entries are the record's
// own: a pod entry is never changed once it is in a record (edit puts a
// changed copy in its place), so a clone costs the map of the pods, not
// their copies, and what changed since is told by pointer (Encoder). The
// rest is copied by reflection, so a field added to the record is copied
// too; values whose unexported fields are never changed through a pointer
// (time.Time, resource.Quantity) are copied as values.
func (r *Rollout) Clone() *Rollout {
	if r == nil {
		return nil
	}
	shell := *r
	shell.Pods = nil
	c := deepCopy(reflect.ValueOf(&shell)).Interface().(*Rollout)
	c.Pods = maps.Clone(r.Pods)
	return c
}

// edit puts a copy of r's pod entry name (which must be there) in its
// place and returns the copy for the caller to change: every change of a
// pod goes through it, as the entry may be shared with the records it was
// cloned from (Clone) and with the encoder's memory of it (Encoder).
// TestEarlierRecordsNeverChange fails when a pod is changed in place.
func (r *Rollout) edit(name string) *Pod {
	c := *r.Pods[name]
	r.Pods[name] = &c
	return &c
}

// deepCopy copies v, following pointers, maps, slices and exported struct
// fields. The record is a tree (no cycles, no shared nodes).
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(deepCopy(v.Elem()))
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			n.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if flat(v.Type().Elem()) {
			reflect.Copy(n, v)
			return n
		}
		for i := range v.Len() {
			n.Index(i).Set(deepCopy(v.Index(i)))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		if flat(v.Type()) {
			return n
		}
		for _, i := range deepFields(v.Type()) {
			n.Field(i).Set(deepCopy(v.Field(i)))
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(deepCopy(v.Elem()))
		return n
	}
	return v
}

// flats and fields cache flat and deepFields by type.
var flats, fields sync.Map

// flat reports whether a value of t copied by assignment shares nothing
// modifiable: no exported pointer, map, slice or interface in it.
func flat(t reflect.Type) bool {
	if v, ok := flats.Load(t); ok {
		return v.(bool)
	}
	f := isFlat(t)
	flats.Store(t, f)
	return f
}

// deepFields are the exported fields of struct type t that are not flat.
func deepFields(t reflect.Type) []int {
	if v, ok := fields.Load(t); ok {
		return v.([]int)
	}
	var out []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && !flat(f.Type) {
			out = append(out, i)
		}
	}
	fields.Store(t, out)
	return out
}

func isFlat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Chan, reflect.Func:
		return false
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !flat(f.Type) {
				return false
			}
		}
	}
	return true
}
