package consume

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/pump"
)

// notFromTheFile are the pump options no field of the subscriptions file
// sets: consume leaves ReceiveMargin to the pump's default and takes
// CutOffGrace from the handler's type (handler.CutOffGrace).
var notFromTheFile = []string{"ReceiveMargin", "CutOffGrace"}

// TestConsume_PumpOptionsFollowTheFieldTable: every field of the
// subscriptions file that the field table maps to a pump option reaches
// that option through consume's mapping with the value the file gave it,
// and every pump option but notFromTheFile is set from a field, so a field
// added to the table and the pump cannot be left out of consume.
func TestConsume_PumpOptionsFollowTheFieldTable(t *testing.T) {
	mapped := map[string]bool{}
	for _, f := range config.Fields() {
		if f.PumpOption == "" {
			continue
		}
		mapped[f.PumpOption] = true
		if f.Block != "subscriptions[]" || f.GoField == "" {
			t.Errorf("%s: maps to pump option %s but is not a subscription field with a Go field", f.Path(), f.PumpOption)
			continue
		}
		s := &config.Subscription{}
		sv := reflect.ValueOf(s).Elem().FieldByName(f.GoField)
		var want any
		switch sv.Kind() {
		case reflect.Int:
			sv.SetInt(7)
			want = int64(7)
		case reflect.Int64: // time.Duration
			sv.SetInt(int64(7 * time.Second))
			want = int64(7 * time.Second)
		case reflect.String:
			v := "x-" + f.Name
			if f.Kind == config.KindEnum {
				v = f.Enum[0]
			}
			sv.SetString(v)
			want = v
		default:
			t.Fatalf("%s: Go field %s of kind %s: teach this test to set it", f.Path(), f.GoField, sv.Kind())
		}
		o := reflect.ValueOf(pumpOptions(s)).FieldByName(f.PumpOption)
		if !o.IsValid() {
			t.Errorf("%s: pump.Options has no field %s", f.Path(), f.PumpOption)
			continue
		}
		var got any
		switch o.Kind() {
		case reflect.Int, reflect.Int64:
			got = o.Int()
		case reflect.String:
			got = o.String()
		}
		if got != want {
			t.Errorf("%s = %v gives pump.Options.%s = %v; want %v", f.Path(), want, f.PumpOption, got, want)
		}
	}
	ot := reflect.TypeFor[pump.Options]()
	for i := range ot.NumField() {
		name := ot.Field(i).Name
		if !mapped[name] && !slices.Contains(notFromTheFile, name) {
			t.Errorf("pump.Options.%s is set from no field of the table (config.Field.PumpOption) and is not in notFromTheFile", name)
		}
	}
}

// TestConsume_MaxLeaseExtensionZeroTurnsExtensionOff: the file's
// maxLeaseExtension 0s (off) becomes the pump's negative (off), not its 0
// (the pump's default).
func TestConsume_MaxLeaseExtensionZeroTurnsExtensionOff(t *testing.T) {
	if got := pumpOptions(&config.Subscription{MaxLeaseExtension: 0}).MaxLeaseExtension; got >= 0 {
		t.Fatalf("maxLeaseExtension 0s gives pump MaxLeaseExtension %v; want a negative duration (off)", got)
	}
}
