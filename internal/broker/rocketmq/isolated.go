package rocketmq

import (
	"reflect"
	"sync"
	"unsafe"
)

// initIsolated works around a data race in rocketmq-clients v5.1.2:
// its producer keeps the endpoints it has isolated in a sync.Map that
// Send copies by value (producer.go, takeMessageQueues passes p.isolated,
// not &p.isolated) while the client's first heartbeat initialises it
// (client.go, LoadAndDelete on the zero sync.Map, an atomic store). The race
// detector reports it whenever a Send coincides with that first heartbeat,
// one second after Start (seen in `brighter send` and inspect's tests).
// Once the map is initialised nothing writes its header again, so
// initialising it before Start, while no goroutine of the client exists,
// leaves the copy only racing reads. Later clients (v5.1.3 on) pass a
// pointer; there this does nothing harmful. It reports whether the field
// was found and initialised (false when a client version has no such
// field): TestIsolatedInitialised pins it for the version in go.mod.
func initIsolated(p any) bool {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("isolated")
	if !f.IsValid() || f.Type() != reflect.TypeFor[sync.Map]() || !f.CanAddr() {
		return false
	}
	m := (*sync.Map)(unsafe.Pointer(f.UnsafeAddr()))
	m.Range(func(any, any) bool { return false }) // initialises the map
	return true
}
