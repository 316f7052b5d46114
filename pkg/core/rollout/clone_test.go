package rollout

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// fill sets every exported field reachable from v (a settable value) to
// something that is not its zero value: one entry in each map and slice,
// a value behind each pointer.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("s", depth))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(depth + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(depth + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		n := reflect.New(v.Type().Elem())
		fill(n.Elem(), depth+1)
		v.Set(n)
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(t0.Add(time.Duration(depth) * time.Minute)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// shared lists the pointers, maps and slices that a and b (equal values)
// share, by path.
func shared(a, b reflect.Value, path string) []string {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if a.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
	}
	var out []string
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		out = shared(a.Elem(), b.Elem(), path)
	case reflect.Map:
		for it := a.MapRange(); it.Next(); {
			out = append(out, shared(it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key()))...)
		}
	case reflect.Slice, reflect.Array:
		for i := range a.Len() {
			out = append(out, shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				out = append(out, shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
			}
		}
	}
	return out
}

// A clone equals the record and shares nothing modifiable with it, every
// field filled (so a field added later is covered too).
func TestCloneSharesNothing(t *testing.T) {
	var r Rollout
	fill(reflect.ValueOf(&r).Elem(), 0)
	if len(r.Pods) == 0 || r.Sync == nil || len(r.Sync.Resources) == 0 || r.Restart == nil || len(r.Gone) == 0 {
		t.Fatalf("fill left parts of the record empty: %+v", r)
	}
	c := r.Clone()
	if !reflect.DeepEqual(&r, c) {
		t.Fatalf("the clone differs from the record:\n%+v\n%+v", r, *c)
	}
	if s := shared(reflect.ValueOf(&r).Elem(), reflect.ValueOf(c).Elem(), "r"); len(s) > 0 {
		t.Errorf("the clone shares %v with the record", s)
	}
	for name, p := range c.Pods {
		p.State, p.Containers[0].ToImage = "Changed", "changed"
		if r.Pods[name].State == "Changed" || r.Pods[name].Containers[0].ToImage == "changed" {
			t.Error("changing the clone's pod changed the record's")
		}
	}
	var none *Rollout
	if none.Clone() != nil {
		t.Error("a nil record's clone is not nil")
	}
}
