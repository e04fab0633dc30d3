# Deutsch. Same message ids as en.ftl. CLDR data: de (https://cldr.unicode.org/).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = ab { $date }
datetime-local = { $date }, { $time } Uhr (Ortszeit)

## Shared phrases
hi = Hallo { $name },
hi-no-name = Guten Tag,
label-colon = { $label }:
label-hotel = Hotel
label-booking = Buchung
label-booking-id = Buchungsnummer
label-hcn = Bestätigungsnummer des Hotels
label-checkin = Anreise
label-checkout = Abreise
label-room = Zimmer
label-room-n = Zimmer { $n }
label-guests = Gäste
label-total = Gesamtpreis
label-pnr = Buchungscode der Airline
label-passengers = { $count ->
    [one] Reisende Person
   *[other] Reisende
}
nights = { $count ->
    [one] { $count } Nacht
   *[other] { $count } Nächte
}
adults = { $count ->
    [one] { $count } Erwachsener
   *[other] { $count } Erwachsene
}
children = { $count ->
    [one] { $count } Kind
   *[other] { $count } Kinder
}
instructions-title = Hinweise zum Check-in

## Booking confirmation (hotel)
confirmation-subject = Ihr Aufenthalt im { $hotel } ist bestätigt
confirmation-heading = Ihr Aufenthalt ist bestätigt
confirmation-intro = Vielen Dank für Ihre Buchung bei { $brand }. Ihr Aufenthalt im { $hotel } ist bestätigt.
confirmation-hcn-known = Bitte zeigen Sie beim Check-in die Bestätigungsnummer des Hotels an der Rezeption vor und halten Sie Ihre Buchungsnummer bereit, wenn Sie uns kontaktieren.
confirmation-hcn-later = Die hoteleigene Bestätigungsnummer folgt meist einige Tage vor der Anreise in einer eigenen E-Mail. Bitte halten Sie Ihre Buchungsnummer bereit, wenn Sie uns kontaktieren.
confirmation-closing = Wir freuen uns auf Ihre Reise.

## Hotel confirmation number
hcn-subject = Ihre Bestätigungsnummer von { $hotel }
hcn-heading = Ihre Bestätigungsnummer des Hotels
hcn-intro = Das { $hotel } hat Ihre Reservierung in seinem eigenen System bestätigt. Ihre Bestätigungsnummer des Hotels lautet:
hcn-intro-text = Das { $hotel } hat Ihre Reservierung in seinem eigenen System bestätigt.
hcn-line = Ihre Bestätigungsnummer des Hotels: { $number }
hcn-show = Bitte zeigen Sie diese Nummer beim Check-in an der Rezeption vor: Damit findet das Hotel Ihre Reservierung.
hcn-booking-id = Ihre Buchungsnummer bei { $brand } bleibt { $id }. Bitte halten Sie sie bereit, wenn Sie uns kontaktieren.

## Arrival guide
arrival-subject = Ihr Aufenthalt im { $hotel } beginnt in 3 Tagen
arrival-heading = Ihr Aufenthalt beginnt in 3 Tagen
arrival-intro = Ihr Aufenthalt im { $hotel } beginnt am { $date }. Hier finden Sie alles, was Sie für Ihre Anreise brauchen.
arrival-before-title = Vor Ihrer Reise
arrival-bring-id = Einen Lichtbildausweis oder Reisepass für den Check-in
arrival-bring-card = Eine Zahlungskarte für Nebenkosten: Viele Hotels blockieren bei der Anreise eine Kaution
arrival-bring-booking-id = Ihre Buchungsnummer
arrival-bring-both = Ihre Buchungsnummer und die Bestätigungsnummer des Hotels
arrival-late = Wenn sich Ihre Pläne ändern oder Sie später ankommen, antworten Sie bitte auf diese E-Mail.
arrival-closing = Gute Reise!

## Check-in day
checkin-subject = Heute: Check-in im { $hotel }
checkin-heading = Heute ist Ihr Anreisetag
checkin-intro = Heute checken Sie im { $hotel } ein. Wir wünschen Ihnen eine angenehme Reise.
checkin-ready = Bitte halten Sie an der Rezeption Ihren Lichtbildausweis und eine Zahlungskarte bereit. Wenn Sie sich verspäten, antworten Sie auf diese E-Mail und wir geben dem Hotel Bescheid.

## Thank you
thanks-subject = Vielen Dank für Ihren Aufenthalt im { $hotel }
thanks-heading = Vielen Dank
thanks-intro = Vielen Dank für Ihren Aufenthalt im { $hotel }. Wir hoffen, Sie hatten eine wunderbare Zeit und eine gute Heimreise.
thanks-reply = Wenn etwas an Ihrem Aufenthalt unsere Aufmerksamkeit braucht, antworten Sie einfach auf diese E-Mail.
thanks-regards = Herzliche Grüße
## Booking updated
updated-subject = Ihre Buchung im { $hotel } wurde geändert
updated-heading = Ihre Buchung wurde geändert
updated-intro = Ihre Buchung im { $hotel } wurde geändert.
updated-what-changed = Das hat sich geändert:
updated-before = Vorher
updated-now = Jetzt
updated-current = Ihre Buchung jetzt
updated-unexpected = Wenn diese Änderung nicht Ihren Erwartungen entspricht, antworten Sie bitte auf diese E-Mail und nennen Sie Ihre Buchungsnummer.
field-hotel-id = Hotelcode
field-hotel-name = Hotel
field-checkin = Anreise
field-checkout = Abreise
field-room-name = Zimmer { $n }
field-room-board = Verpflegung, Zimmer { $n }
field-room-adults = Erwachsene, Zimmer { $n }
field-room-children = Kinder, Zimmer { $n }
field-guests = Gäste
field-holder = Buchung auf den Namen
field-hotel-confirmation-number = Bestätigungsnummer des Hotels
field-segment-flight-number = Flugnummer, Flug { $n }
field-segment-origin = Von, Flug { $n }
field-segment-destination = Nach, Flug { $n }
field-segment-departure = Abflug, Flug { $n }
field-segment-arrival = Ankunft, Flug { $n }
field-passengers = Reisende

## Flights
flight-subject = Ihr Flug { $from } → { $to } ist bestätigt
flight-heading = Ihr Flug ist bestätigt
flight-intro = Vielen Dank für Ihre Buchung bei { $brand }. Ihr Flug von { $from } nach { $to } ist bestätigt.
flight-list-title = { $count ->
    [one] Ihr Flug
   *[other] Ihre Flüge
}
flight-number = Flug { $number }
flight-departs = Abflug
flight-arrives = Ankunft
flight-local-times = Alle Zeiten sind Ortszeiten des jeweiligen Flughafens.
flight-checkin-pnr = Mit dem Buchungscode der Airline checken Sie bei der Airline ein.
flight-rules = Bitte prüfen Sie vor der Reise die Check-in- und Gepäckregeln der Airline und achten Sie darauf, dass die Namen der Reisenden mit ihren Reisedokumenten übereinstimmen.
flight-closing = Wir wünschen Ihnen einen guten Flug.
flight-changed-subject = Wichtig: Ihr Flugplan hat sich geändert
flight-changed-heading = Ihr Flugplan hat sich geändert
flight-changed-intro = Die Airline hat den Flugplan Ihrer Flugbuchung geändert. Bitte prüfen Sie die neuen Zeiten unten.
flight-changed-intro-pnr = Die Airline hat den Flugplan Ihrer Flugbuchung { $pnr } geändert. Bitte prüfen Sie die neuen Zeiten unten.
flight-changed-new = Neuer Flugplan
flight-changed-previous = Bisheriger Flugplan
flight-changed-todo = Was zu tun ist
flight-changed-reply = Bitte antworten Sie auf diese E-Mail, um den neuen Flugplan anzunehmen. Wenn die neuen Zeiten für Sie nicht passen, antworten Sie auf diese E-Mail und wir besprechen die Alternativen mit Ihnen.
flight-booking-title = Flugbuchung { $id }

## Cancellation
cancelled-subject = Ihre Buchung { $id } ist storniert
cancelled-heading = Ihre Buchung ist storniert
cancelled-intro = Ihre Buchung { $id } wurde storniert.
cancelled-fee = Stornogebühr
cancelled-refund = Erstattungsbetrag
cancelled-fee-applies = Für diese Buchung fällt eine Stornogebühr an.
cancelled-questions = Wenn Sie diese Stornierung nicht erwartet haben oder Fragen haben, antworten Sie bitte auf diese E-Mail und nennen Sie Ihre Buchungsnummer.

## Booking not confirmed
notice-title-cancelled = Ihre Buchung wurde storniert
notice-title-not-confirmed = Wir konnten Ihre Buchung nicht bestätigen
notice-cancelled = Es tut uns leid: Ihre Buchung wurde storniert. Der Anbieter konnte sie nicht aufrechterhalten; bitte reisen Sie daher nicht im Vertrauen auf die Bestätigung, die wir Ihnen geschickt haben.
notice-cancelled-trip = Es tut uns leid: Ihre Buchung für { $trip } wurde storniert. Der Anbieter konnte sie nicht aufrechterhalten; bitte reisen Sie daher nicht im Vertrauen auf die Bestätigung, die wir Ihnen geschickt haben.
notice-not-confirmed = Es tut uns leid: Wir konnten Ihre Buchung nicht bestätigen. Der Anbieter konnte sie nicht abschließen, daher besteht keine Reservierung auf Ihren Namen.
notice-not-confirmed-trip = Es tut uns leid: Wir konnten Ihre Buchung für { $trip } nicht bestätigen. Der Anbieter konnte sie nicht abschließen, daher besteht keine Reservierung auf Ihren Namen.
notice-book-again = Wenn Sie weiterhin reisen möchten, können Sie gern erneut buchen; Preise und Verfügbarkeit können sich geändert haben. Bei Fragen antworten Sie einfach auf diese E-Mail.
refund-not-charged = Ihnen wurde nichts berechnet.
refund-unknown = Falls für diese Buchung eine Zahlung eingezogen wurde, wird sie vollständig erstattet; wir melden uns, falls wir etwas von Ihnen brauchen.
refund-refunding = Ihre Zahlung wird auf die Karte erstattet, mit der Sie bezahlt haben. Erstattungen erscheinen meist nach 5–10 Werktagen auf Ihrer Abrechnung.
refund-refunding-amount = Ihre Zahlung von { $amount } wird auf die Karte erstattet, mit der Sie bezahlt haben. Erstattungen erscheinen meist nach 5–10 Werktagen auf Ihrer Abrechnung.
refund-refunded = Ihre Zahlung wurde auf die Karte erstattet, mit der Sie bezahlt haben. Sie erscheint meist nach 5–10 Werktagen auf Ihrer Abrechnung.
refund-refunded-amount = Ihre Zahlung von { $amount } wurde auf die Karte erstattet, mit der Sie bezahlt haben. Sie erscheint meist nach 5–10 Werktagen auf Ihrer Abrechnung.
refund-arranging = Wir veranlassen Ihre Erstattung und bestätigen sie per E-Mail, sobald sie erfolgt ist.

## Unfinished checkout
checkout-trip-stay = Ihren Aufenthalt, { $dates }
checkout-subject = Ihre Buchung wurde nicht abgeschlossen – es wurde nichts berechnet
checkout-heading = Ihre Buchung wurde nicht abgeschlossen
checkout-intro = Sie haben eine Buchung bei { $brand } begonnen, sie wurde aber nicht abgeschlossen, und es wurde nichts berechnet.
checkout-intro-trip = Sie haben eine Buchung bei { $brand } für { $trip } begonnen, sie wurde aber nicht abgeschlossen, und es wurde nichts berechnet.
checkout-reasons = Wenn Sie es sich anders überlegt haben, müssen Sie nichts tun. Wenn Sie buchen wollten: Das sind die zwei häufigsten Gründe, warum eine Kartenzahlung nicht durchgeht, und wie Sie sie jeweils beheben:
checkout-retry = Buchung erneut versuchen
checkout-retry-prices = Preise und Verfügbarkeit können sich ändern; bitte prüfen Sie sie beim erneuten Versuch. Wenn etwas anderes schiefging, antworten Sie einfach auf diese E-Mail.
declined-funds-subject = Ihre Zahlung ist nicht durchgegangen: nicht genug Guthaben oder Kreditrahmen
declined-security-subject = Ihre Zahlung wurde von einer Sicherheitsprüfung gestoppt
declined-intro = Ihre Buchung bei { $brand } wurde nicht abgeschlossen, und es wurde nichts berechnet. Wir haben die Zahlung geprüft; das hat sie gestoppt:
declined-intro-trip = Ihre Buchung bei { $brand } für { $trip } wurde nicht abgeschlossen, und es wurde nichts berechnet. Wir haben die Zahlung geprüft; das hat sie gestoppt:
declined-questions = Preise und Verfügbarkeit können sich ändern; bitte prüfen Sie sie beim erneuten Versuch. Bei Fragen antworten Sie einfach auf diese E-Mail.
fix-funds-title = Nicht genug Guthaben oder verfügbarer Kreditrahmen
fix-funds-why = Guthaben oder Kreditrahmen der Karte decken möglicherweise nicht den vollen Betrag des Aufenthalts, oder ein tägliches Ausgabenlimit wurde erreicht.
fix-funds-how = So beheben Sie es: Verwenden Sie eine andere Karte oder bitten Sie Ihre Bank, das Limit zu erhöhen oder Geld auf diese Karte zu übertragen, und versuchen Sie es dann erneut.
fix-security-title = Eine Sicherheitsprüfung Ihrer Bank oder des Zahlungsdienstleisters
fix-security-why = Banken und Zahlungsdienstleister stoppen manchmal eine Zahlung, die ihnen ungewöhnlich erscheint, zum Beispiel einen höheren Betrag, eine Zahlung im Ausland oder einen ersten Kauf bei einem neuen Händler. Das schützt Sie und sagt nichts Schlechtes über Sie aus.
fix-security-how = So beheben Sie es: Bestätigen Sie die Zahlung in Ihrer Banking-App oder rufen Sie die Nummer auf der Rückseite Ihrer Karte an und sagen Sie, dass Sie diese Zahlung leisten möchten; versuchen Sie es dann erneut.

## Marketing footer and unsubscribe pages
marketing-footer = Dies ist eine Marketing-E-Mail von { $brand }.
marketing-unsubscribe-link = Von Marketing-E-Mails abmelden
marketing-unsubscribe-one-click = mit einem Klick.
marketing-unsubscribe-text = Mit einem Klick von Marketing-E-Mails abmelden: { $url }
marketing-bookings-still = E-Mails zu Ihren Buchungen erhalten Sie weiterhin.
unsubscribe-title = Von Marketing-E-Mails abmelden
unsubscribe-question = Von Marketing-E-Mails abmelden?
unsubscribe-who = { $email } erhält keine Marketing-E-Mails von { $brand } mehr.
unsubscribe-bookings-still = E-Mails zu Ihren Buchungen (Bestätigungen, Änderungen, Check-in-Details) erhalten Sie weiterhin.
unsubscribe-button = Abmelden
unsubscribe-nothing-yet = Das Öffnen dieser Seite hat nichts geändert.
unsubscribe-retry-title = Bitte versuchen Sie es später erneut
unsubscribe-retry = Ihre Anfrage konnte gerade nicht bearbeitet werden. Es wurde nichts geändert.
unsubscribe-invalid-title = Dieser Abmeldelink ist ungültig
unsubscribe-invalid-cut = Er wurde möglicherweise gekürzt oder verändert. Öffnen Sie den Link erneut aus der E-Mail oder kopieren Sie ihn vollständig. Es wurde nichts geändert.
unsubscribe-invalid-list = Das ist kein Link zur Abmeldung von Marketing-E-Mails. Es wurde nichts geändert.
unsubscribe-post-title = Es wurde nichts geändert
unsubscribe-post-only = Eine Abmeldung muss ein POST mit dem Formularinhalt List-Unsubscribe=One-Click (RFC 8058) sein. Verwenden Sie die Schaltfläche auf der Abmeldeseite.
unsubscribe-done-title = Sie sind abgemeldet
unsubscribe-done = { $email } erhält keine Marketing-E-Mails mehr. E-Mails zu Ihren Buchungen erhalten Sie weiterhin.
unsubscribe-done-brand = { $email } erhält keine Marketing-E-Mails von { $brand } mehr. E-Mails zu Ihren Buchungen erhalten Sie weiterhin.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = Zu Ihrer Buchung { $ref }
answer-about = Ihre Buchung { $ref }
answer-reply = Um uns erneut zu schreiben, antworten Sie einfach auf diese E-Mail.

## Board types
board-room-only = Nur Übernachtung
board-breakfast = Frühstück inklusive
board-half-board = Halbpension
board-full-board = Vollpension
board-all-inclusive = All-inclusive

## The calendar attachment
calendar-note-add = { $count ->
    [one] Die angehängte Kalenderdatei trägt diese Buchung in Ihren Kalender ein. Unsere nächsten E-Mails aktualisieren den Eintrag, eine Stornierung entfernt ihn.
   *[other] Die angehängten Kalenderdateien tragen jeden Flug in Ihren Kalender ein. Unsere nächsten E-Mails aktualisieren die Einträge, eine Stornierung entfernt sie.
}
calendar-note-cancel = { $count ->
    [one] Die angehängte Kalenderdatei entfernt die stornierte Buchung aus Ihrem Kalender.
   *[other] Die angehängten Kalenderdateien entfernen die stornierten Flüge aus Ihrem Kalender.
}
calendar-note-update-remove = Die angehängten Kalenderdateien aktualisieren Ihre Flüge im Kalender und entfernen die Flüge, die es nicht mehr gibt.
